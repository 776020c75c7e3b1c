import { describe, expect, test } from "bun:test";
import { createLogger } from "../log";
import { isPlainMessageDelta, type LiveEvent, messageDeltaEventSchema } from "./events";
import { LiveHub } from "./hub";

const planner = (documentId: string, state: "attached" | "working" = "attached"): LiveEvent => ({
	type: "planner.status",
	documentId,
	state,
	login: "octocat",
});

describe("LiveHub", () => {
	test("delivers a document's events, in order, only to that document's listeners", () => {
		const hub = new LiveHub();
		const a: LiveEvent[] = [];
		const b: LiveEvent[] = [];
		hub.subscribe("doc-a", (e) => a.push(e));
		hub.subscribe("doc-b", (e) => b.push(e));
		hub.publish("doc-a", planner("doc-a"));
		hub.publish("doc-a", planner("doc-a", "working"));
		hub.publish("doc-b", planner("doc-b"));
		expect(a.map((e) => (e.type === "planner.status" ? e.state : ""))).toEqual(["attached", "working"]);
		expect(b).toHaveLength(1);
	});

	test("unsubscribe stops delivery, is idempotent, and the same function twice is two subscriptions", () => {
		const hub = new LiveHub();
		const seen: LiveEvent[] = [];
		const listener = (e: LiveEvent) => seen.push(e);
		const first = hub.subscribe("d", listener);
		const second = hub.subscribe("d", listener);
		hub.publish("d", planner("d"));
		expect(seen).toHaveLength(2);
		first();
		first();
		hub.publish("d", planner("d"));
		expect(seen).toHaveLength(3);
		second();
		expect(hub.listenerCount("d")).toBe(0);
		hub.publish("d", planner("d"));
		expect(seen).toHaveLength(3);
	});

	test("a listener that throws is logged and hurts neither the publisher nor other listeners", () => {
		const lines: string[] = [];
		const hub = new LiveHub({ log: createLogger({ write: (line) => lines.push(line) }) });
		const seen: string[] = [];
		hub.subscribe("d", () => {
			throw new Error("socket gone");
		});
		hub.subscribe("d", (e) => seen.push(e.type));
		hub.subscribeAll((documentId) => seen.push(`all:${documentId}`));
		expect(() => hub.publish("d", planner("d"))).not.toThrow();
		expect(seen).toEqual(["planner.status", "all:d"]);
		expect(lines.join("\n")).toContain("live listener failed");
	});

	test("a listener may unsubscribe while an event is delivered", () => {
		const hub = new LiveHub();
		const seen: string[] = [];
		const off = hub.subscribe("d", () => {
			seen.push("once");
			off();
		});
		hub.subscribe("d", () => seen.push("always"));
		hub.publish("d", planner("d"));
		hub.publish("d", planner("d"));
		expect(seen).toEqual(["once", "always", "always"]);
	});

	test("events are checked: a bad shape, or one published to another document, is a bug", () => {
		const hub = new LiveHub();
		expect(() =>
			hub.publish("d", { type: "planner.status", documentId: "d", state: "asleep" } as never),
		).toThrow();
		expect(() => hub.publish("e", planner("d"))).toThrow(/published to e/);
		expect(() =>
			hub.publish("d", { type: "message.delta", documentId: "d", messageId: "m", offset: -1, delta: "x" }),
		).toThrow();
	});

	test("a message.delta checked by hand passes exactly when its schema would", () => {
		const ok = { type: "message.delta", documentId: "d", messageId: "m", offset: 0, delta: "hi" };
		const variants: unknown[] = [
			ok,
			{ ...ok, offset: 12 },
			{ ...ok, delta: "" },
			{ ...ok, offset: -1 },
			{ ...ok, offset: 1.5 },
			{ ...ok, offset: 2 ** 53 },
			{ ...ok, offset: "1" },
			{ ...ok, delta: 1 },
			{ ...ok, messageId: undefined },
			{ ...ok, extra: true },
			{ type: "message.delta", documentId: "d", messageId: "m", offset: 0 },
			{ ...ok, type: "message.created" },
			null,
			"message.delta",
		];
		for (const event of variants) {
			expect(isPlainMessageDelta(event)).toBe(messageDeltaEventSchema.safeParse(event).success);
		}
		const hub = new LiveHub();
		expect(() => hub.publish("d", { ...ok, offset: -1 } as LiveEvent)).toThrow();
	});
});
