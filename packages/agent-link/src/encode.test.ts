import { describe, expect, test } from "bun:test";
import { EncodeError, encodeClientMessage, encodeMessage, encodeServerMessage } from "./encode";
import { MAX_FRAME_BYTES } from "./limits";
import type { ClientMessage } from "./schemas/client-messages";
import type { ServerMessage } from "./schemas/server-messages";
import { clientMessages, deltaCard, serverMessages } from "./testing/examples";
import { ALL_FEATURES } from "./testing/helpers";
import { cutNote } from "./text";

function thrown(fn: () => unknown): EncodeError {
	try {
		fn();
	} catch (error) {
		if (error instanceof EncodeError) return error;
		throw error;
	}
	throw new Error("expected an EncodeError");
}

describe("encodeMessage", () => {
	test("every example is written as the JSON the other side parses", () => {
		for (const message of Object.values(clientMessages) as ClientMessage[]) {
			const text = encodeClientMessage(message, { features: ALL_FEATURES });
			expect(JSON.parse(text)).toEqual(message);
			expect(encodeMessage(message, { features: ALL_FEATURES })).toBe(text);
		}
		for (const message of Object.values(serverMessages) as ServerMessage[]) {
			const text = encodeServerMessage(message, { features: ALL_FEATURES });
			expect(JSON.parse(text)).toEqual(message);
			expect(encodeMessage(message, { features: ALL_FEATURES })).toBe(text);
		}
	});

	test("resume is the client's when it lists sessions and Resume Planner otherwise", () => {
		const options = { features: ALL_FEATURES };
		expect(encodeMessage(clientMessages.resume, options)).toBe(JSON.stringify(clientMessages.resume));
		expect(encodeMessage(serverMessages.resume, options)).toBe(JSON.stringify(serverMessages.resume));
	});

	test("an invalid message throws what the other side would answer, naming the field", () => {
		const error = thrown(() =>
			encodeClientMessage({ type: "start-failed", session: "s1", message: "x".repeat(4001) }),
		);
		expect(error.code).toBe("malformed-message");
		expect(error.message).toBe("Invalid start-failed message: message is longer than 4000 characters.");
		expect(error.hint).toContain("cutNote");
		expect(
			encodeClientMessage({ type: "start-failed", session: "s1", message: cutNote("x".repeat(4001)) }),
		).toContain("start-failed");
	});

	test("a message the link did not negotiate is never written", () => {
		const runs = { type: "runs", session: "s1", active: [], paused: [], cards: [deltaCard] } as ClientMessage;
		expect(thrown(() => encodeClientMessage(runs)).message).toContain("run-stage-deltas");
		expect(encodeClientMessage(runs, { features: ["run-stage-deltas"] })).toContain("stagesDelta");
		expect(thrown(() => encodeServerMessage(serverMessages.fork)).message).toContain("session-forks");
	});

	test("over 2 MiB of UTF-8 throws message-too-large with the exact size", () => {
		const message = {
			type: "part",
			session: "s",
			turn: "t",
			part: { type: "text-delta", id: "x", delta: "€".repeat(700_000) },
		};
		const error = thrown(() => encodeClientMessage(message as ClientMessage));
		expect(error.code).toBe("message-too-large");
		const bytes = new TextEncoder().encode(JSON.stringify(message)).byteLength;
		expect(bytes).toBeGreaterThan(MAX_FRAME_BYTES);
		expect(error.message).toBe(
			`The message is ${bytes.toLocaleString("en-US")} bytes of UTF-8, over the 2,097,152-byte frame limit.`,
		);
	});

	test("undefined fields are left out, as the other side would see them", () => {
		const text = encodeClientMessage({
			type: "turn-end",
			session: "s",
			turn: "t",
			status: "finished",
			message: undefined,
		});
		expect(text).toBe('{"type":"turn-end","session":"s","turn":"t","status":"finished"}');
	});

	test("what JSON cannot hold is refused", () => {
		const cyclic: Record<string, unknown> = { type: "detach" };
		cyclic.self = cyclic;
		expect(thrown(() => encodeClientMessage(cyclic as ClientMessage)).code).toBe("malformed-message");
		const big = { type: "restarting", reconnectWithinMs: 10n };
		expect(
			thrown(() => encodeServerMessage(big as unknown as ServerMessage, { features: ALL_FEATURES })).message,
		).toBe("The message cannot be written as JSON.");
	});
});
