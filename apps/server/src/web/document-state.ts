// What a document page shows, and how each live event changes it. Pure, so applying an event twice, or
// an event older than the loaded state, changes nothing: a page loads its state after every "ready" and
// replays the events that arrived meanwhile.
import type { LiveEvent } from "../live/events";
import type { DecisionView, DocumentPayload, MessageView, PlannerStatus, RunCardView } from "./api";

export interface DocumentState {
	payload: DocumentPayload;
	/** Oldest first, by seq. */
	messages: MessageView[];
	/** Whether older messages remain on the server. */
	moreMessages: boolean;
	/** In the order asked (seq). */
	decisions: DecisionView[];
	runs: RunCardView[];
	planner: PlannerStatus;
	/** The page must load the document again: its source changed (new blocks), or a delta was missed. */
	stale: boolean;
	/** The document was deleted while open. */
	deleted: boolean;
}

const bySeq = <T extends { seq: number }>(a: T, b: T) => a.seq - b.seq;
const byStart = (a: RunCardView, b: RunCardView) =>
	a.started - b.started || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function upsertMessage(messages: MessageView[], next: MessageView): MessageView[] {
	const at = messages.findIndex((m) => m.id === next.id);
	if (at < 0) return [...messages, next].sort(bySeq);
	const current = messages[at]!;
	if (next.updatedAt < current.updatedAt) return messages;
	// A streaming reply's text may be ahead of the whole message an event carries: keep the longer.
	const body =
		next.status === "streaming" &&
		current.body.length > next.body.length &&
		current.body.startsWith(next.body)
			? current.body
			: next.body;
	const copy = [...messages];
	copy[at] = { ...next, body };
	return copy;
}

function upsertDecision(decisions: DecisionView[], next: DecisionView): DecisionView[] {
	const at = decisions.findIndex((d) => d.id === next.id);
	if (at < 0) return [...decisions, next].sort(bySeq);
	if (next.version <= decisions[at]!.version) return decisions;
	const copy = [...decisions];
	copy[at] = next;
	return copy;
}

export function applyEvent(state: DocumentState, event: LiveEvent): DocumentState {
	switch (event.type) {
		case "message.created":
		case "message.updated":
			return { ...state, messages: upsertMessage(state.messages, event.message) };
		case "message.delta": {
			const at = state.messages.findIndex((m) => m.id === event.messageId);
			if (at < 0) return { ...state, stale: true };
			const message = state.messages[at]!;
			const end = event.offset + event.delta.length;
			if (end <= message.body.length) return state;
			if (event.offset > message.body.length) return { ...state, stale: true };
			const copy = [...state.messages];
			copy[at] = { ...message, body: message.body + event.delta.slice(message.body.length - event.offset) };
			return { ...state, messages: copy };
		}
		case "decision.created":
		case "decision.updated":
			return { ...state, decisions: upsertDecision(state.decisions, event.decision) };
		case "runs.updated": {
			const changed = new Map(event.cards.map((c) => [c.id, c]));
			const kept = state.runs.filter((r) => !changed.has(r.id) && !event.removed.includes(r.id));
			return { ...state, runs: [...kept, ...changed.values()].sort(byStart) };
		}
		case "document.updated": {
			const { document } = state.payload;
			const summary = event.document;
			const payload = {
				...state.payload,
				document: { ...document, ...summary, source: event.source ?? document.source },
			};
			const sourceChanged = event.change === "source" && summary.revision > document.revision;
			return {
				...state,
				payload,
				stale: state.stale || sourceChanged,
				deleted: state.deleted || event.change === "deleted",
			};
		}
		case "planner.status": {
			const { type: _type, documentId: _id, ...planner } = event;
			return { ...state, planner };
		}
		case "builds.updated":
		case "build.log":
			// Builds and investigations are not on the page yet (their panel keeps its own state).
			return state;
	}
}
