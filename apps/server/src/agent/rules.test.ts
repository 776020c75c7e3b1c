// The pure parts of the endpoint: remembered request ids, stream part rules, document references, ownership.
import { describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { documentIdOf } from "./document-ref";
import { Ownership } from "./ownership";
import { TurnRules } from "./parts";
import { RememberedIds } from "./request-ids";

describe("RememberedIds", () => {
	test("open ids are remembered however many come after; settled ones for the last `capacity` received", () => {
		const ids = new RememberedIds(3);
		expect(ids.receive("a")).toBe(true);
		expect(ids.receive("a")).toBe(false);
		for (const id of ["b", "c", "d", "e"]) expect(ids.receive(id)).toBe(true);
		// a is out of the last three but still open.
		expect(ids.receive("a")).toBe(false);
		ids.settle("a");
		expect(ids.receive("a")).toBe(true);
		ids.settle("b");
		expect(ids.receive("b")).toBe(true);
		ids.settle("e");
		expect(ids.receive("e")).toBe(false);
	});
});

describe("TurnRules", () => {
	const rules = (isolated = false) =>
		new TurnRules(new Set(["read_plan"]), new Set(["read_plan", "edit_plan"]), isolated);
	const call = (id: string, toolName = "search") =>
		({ type: "tool-call", toolCallId: id, toolName, input: "{}", providerExecuted: true }) as const;
	const result = (id: string, extra = {}) =>
		({ type: "tool-result", toolCallId: id, toolName: "search", result: 1, ...extra }) as const;

	test("own tools: declared first, each id once, results after their call, preliminary then final", () => {
		const r = rules();
		expect(r.check(call("c1")).ok).toBe(false);
		expect(r.declare(["search"])).toBeNull();
		expect(r.check(call("c1"))).toMatchObject({ ok: true, effect: { kind: "tool-call" } });
		expect(r.check(result("c1", { preliminary: true }))).toMatchObject({ ok: true });
		expect(r.check(result("c1"))).toMatchObject({ ok: true });
		expect(r.check(result("c1"))).toMatchObject({
			ok: false,
			failure: expect.stringContaining("after its final result"),
		});
		expect(r.check(call("c1"))).toMatchObject({
			ok: false,
			failure: expect.stringContaining("Repeated tool call"),
		});
		expect(r.takeCallId("h1")).toBeNull();
		expect(r.takeCallId("h1")).toContain("Repeated tool call");
		expect(r.check(call("h1"))).toMatchObject({ ok: false });
	});

	test("host tool names are not own tools; isolated sessions declare none", () => {
		expect(rules().declare(["edit_plan"])).toContain("host tool's name");
		expect(rules(true).declare(["search"])).toContain("isolated");
		expect(rules(true).declare([])).toBeNull();
		expect(rules().check({ type: "tool-input-start", id: "i", toolName: "read_plan" }).ok).toBe(true);
		expect(rules().check({ type: "tool-input-start", id: "i", toolName: "x" }).ok).toBe(false);
		expect(rules().check({ type: "error", error: "boom" })).toEqual({ ok: false, failure: "boom" });
	});
});

describe("documentIdOf", () => {
	const base = "https://chopin.example";
	test("an id, or a page URL on this origin", () => {
		expect(documentIdOf("abc", base)).toBe("abc");
		expect(documentIdOf(`${base}/d/abc`, base)).toBe("abc");
		expect(documentIdOf(`${base}/d/abc/?x=1#y`, base)).toBe("abc");
		expect(documentIdOf(`${base}/d/a%20b`, base)).toBe("a b");
		expect(documentIdOf("https://other.example/d/abc", base)).toBeNull();
		expect(documentIdOf(`${base}/docs/abc`, base)).toBeNull();
		expect(documentIdOf(`${base}/d/abc/more`, base)).toBeNull();
		expect(documentIdOf("  ", base)).toBeNull();
	});
});

describe("Ownership", () => {
	test("attached, then a grace period only the same account (any case) may end by returning", async () => {
		const clock = new ManualClock();
		const changes: string[] = [];
		const o = new Ownership(
			clock,
			() => 1000,
			(id) => changes.push(id),
		);
		expect(o.acquire("d", { login: "Alice", kind: "account", linkId: "l1" })).toEqual({ ok: true });
		expect(o.acquire("d", { login: "alice", kind: "account", linkId: "l2" }).ok).toBe(false);
		o.leave("d", "other-link", "grace");
		expect(o.holder("d")?.state).toBe("attached");
		o.leave("d", "l1", "grace");
		expect(o.holder("d")).toMatchObject({ state: "grace", until: clock.now() + 1000 });
		expect(o.acquire("d", { login: "bob", kind: "account", linkId: "l3" })).toMatchObject({ ok: false });
		expect(o.acquire("d", { login: "alice", kind: "account", linkId: "l4" })).toEqual({ ok: true });
		o.leave("d", "l4", "grace");
		await clock.advance(1000);
		expect(o.holder("d")).toBeUndefined();
		expect(changes.length).toBe(5);
		expect(clock.pending).toBe(0);
	});
});
