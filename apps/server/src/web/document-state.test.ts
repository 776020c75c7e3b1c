import { describe, expect, test } from "bun:test";
import type { DecisionView, DocumentPayload, MessageView } from "./api";
import { applyEvent, type DocumentState } from "./document-state";

const message = (over: Partial<MessageView> = {}): MessageView => ({
	id: "m1",
	documentId: "d1",
	seq: 1,
	role: "planner",
	authorLogin: null,
	body: "",
	status: "streaming",
	replyTo: null,
	tools: [],
	images: [],
	createdAt: 1,
	updatedAt: 1,
	...over,
});

function state(over: Partial<DocumentState> = {}): DocumentState {
	const payload = {
		document: { id: "d1", revision: 0, source: "", blocks: [] },
		permission: "read",
		url: "",
		images: [],
	} as unknown as DocumentPayload;
	return {
		payload,
		messages: [],
		moreMessages: false,
		decisions: [],
		runs: [],
		planner: { state: "unattached" },
		stale: false,
		deleted: false,
		...over,
	};
}

describe("applying live events", () => {
	test("deltas append at their offset, once; a gap asks for a reload", () => {
		let s = state({ messages: [message({ body: "Hel" })] });
		const delta = (offset: number, text: string) =>
			applyEvent(s, { type: "message.delta", documentId: "d1", messageId: "m1", offset, delta: text });
		s = delta(3, "lo");
		expect(s.messages[0]!.body).toBe("Hello");
		s = delta(3, "lo");
		expect(s.messages[0]!.body).toBe("Hello");
		s = delta(4, "o, world");
		expect(s.messages[0]!.body).toBe("Hello, world");
		expect(delta(20, "late").stale).toBe(true);
	});

	test("a whole message does not undo text streamed ahead of it; a newer one replaces it", () => {
		let s = state({ messages: [message({ body: "Hello there" })] });
		s = applyEvent(s, {
			type: "message.updated",
			documentId: "d1",
			message: message({ body: "Hello", updatedAt: 2 }),
		});
		expect(s.messages[0]!.body).toBe("Hello there");
		s = applyEvent(s, {
			type: "message.updated",
			documentId: "d1",
			message: message({ body: "Done", status: "done", updatedAt: 3 }),
		});
		expect(s.messages[0]).toMatchObject({ body: "Done", status: "done" });
		s = applyEvent(s, {
			type: "message.created",
			documentId: "d1",
			message: message({ id: "m0", seq: 0, body: "first" }),
		});
		expect(s.messages.map((m) => m.id)).toEqual(["m0", "m1"]);
	});

	test("a decision keeps its highest version", () => {
		const d = (version: number, status: DecisionView["status"]) =>
			({ id: "x", seq: 1, version, status }) as DecisionView;
		let s = applyEvent(state(), { type: "decision.created", documentId: "d1", decision: d(0, "open") });
		s = applyEvent(s, { type: "decision.updated", documentId: "d1", decision: d(2, "answered") });
		s = applyEvent(s, { type: "decision.updated", documentId: "d1", decision: d(1, "open") });
		expect(s.decisions.map((x) => x.status)).toEqual(["answered"]);
	});

	test("a source change marks the page stale; deletion and the Planner's status are kept", () => {
		const summary = {
			id: "d1",
			repository: "a/b",
			title: "T",
			revision: 1,
			archived: false,
			deleted: false,
			createdBy: "a",
			createdAt: 1,
			updatedAt: 2,
		};
		const s = applyEvent(state(), {
			type: "document.updated",
			documentId: "d1",
			change: "source",
			document: summary,
			source: "# x",
		});
		expect(s.stale).toBe(true);
		expect(s.payload.document.source).toBe("# x");
		const gone = applyEvent(s, {
			type: "document.updated",
			documentId: "d1",
			change: "deleted",
			document: { ...summary, deleted: true },
		});
		expect(gone.deleted).toBe(true);
		const planner = applyEvent(s, {
			type: "planner.status",
			documentId: "d1",
			state: "attached",
			login: "octocat",
		});
		expect(planner.planner).toEqual({ state: "attached", login: "octocat" });
	});
});
