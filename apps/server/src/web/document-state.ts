// What a document page shows, and how each live event changes it. Pure, so applying an event twice, or
// an event older than the loaded state, changes nothing: a page loads its state after every "ready" and
// replays the events that arrived meanwhile.
import type { ChatModelState, LiveEvent } from "../live/events";
import type {
	BuildView,
	DecisionView,
	DocumentPayload,
	LogLine,
	MessageView,
	PlannerStatus,
	RunCardView,
} from "./api";

/**
 * The log lines a page holds for one build or investigation: the newest ones it knows, contiguous by seq, so a
 * line missed while the socket was away never hides inside what is shown (older lines are paged in on demand).
 */
export interface BuildLog {
	/** Oldest first, each seq one more than the last. */
	lines: LogLine[];
	/** Whether lines before the first held may remain on the server. */
	older: boolean;
	/** Whether the page asked the server for this log; until then it holds only lines that came live. */
	loaded: boolean;
}

/** At most this many lines are held per run: as many as the server keeps (builds/log-lines.ts, LOG_LINES_KEPT). */
export const LOG_LINES_HELD = 5_000;

export interface DocumentState {
	payload: DocumentPayload;
	/** Oldest first, by seq. */
	messages: MessageView[];
	/** Whether older messages remain on the server. */
	moreMessages: boolean;
	/** In the order asked (seq). */
	decisions: DecisionView[];
	runs: RunCardView[];
	/** Builds and investigations, newest first. */
	builds: BuildView[];
	/** Their log lines, by build id, for those the page has lines of. */
	buildLogs: Record<string, BuildLog>;
	planner: PlannerStatus;
	/** What the composer offers from the attached client's catalog and the document's choice (capability-catalog). */
	model: ChatModelState;
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

const IMAGE_PATHS = /\/images\/[0-9a-f]{64}\.[a-z]+/g;

/** Whether a decision's text names an /images/ path the page does not know as one of the document's own. */
function namesUnknownImage(decision: DecisionView, known: readonly string[]): boolean {
	const text = JSON.stringify(decision.question) ?? "";
	return [...text.matchAll(IMAGE_PATHS)].some(([path]) => !known.includes(path));
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
		case "message.deleted":
			return { ...state, messages: state.messages.filter((m) => m.id !== event.messageId) };
		case "decision.created":
		case "decision.updated": {
			const decisions = upsertDecision(state.decisions, event.decision);
			// An image uploaded since the page loaded (upload_plan_image, then a question showing it) is not in
			// the page's list of the document's own images yet: load again to learn whether it is one.
			const unknown =
				event.type === "decision.created" && namesUnknownImage(event.decision, state.payload.images);
			return { ...state, decisions, stale: state.stale || unknown };
		}
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
		case "chat.model": {
			const { type: _type, documentId: _id, ...model } = event;
			return { ...state, model };
		}
		case "builds.updated": {
			let builds = state.builds.filter((b) => !event.removed.includes(b.id));
			for (const build of event.builds)
				if (!event.removed.includes(build.id)) builds = upsertBuild(builds, build);
			const buildLogs = { ...state.buildLogs };
			for (const id of event.removed) delete buildLogs[id];
			return { ...state, builds, buildLogs };
		}
		case "build.log":
			return withLogLines(state, event.build, event.lines);
	}
}

const newestFirst = (a: BuildView, b: BuildView) =>
	b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * A build as an event or an answer gives it, over the one held: an older one (by updatedAt) changes nothing. Live
 * events carry neither the machine's label nor the workspace path (only its owner may see them), so the ones the
 * page read for its owner are kept; the log's last seq only grows (lines come on their own events).
 */
export function upsertBuild(builds: BuildView[], next: BuildView): BuildView[] {
	const at = builds.findIndex((b) => b.id === next.id);
	if (at < 0) return [...builds, next].sort(newestFirst);
	const current = builds[at]!;
	// An older view still brings the owner's label or path when the one held lacks them (an answer overtaken by an event).
	const [newer, other] = next.updatedAt < current.updatedAt ? [current, next] : [next, current];
	const label =
		newer.machine.label ?? (other.machine.id === newer.machine.id ? other.machine.label : undefined);
	const path =
		newer.workspace?.path ??
		(newer.workspace && other.workspace?.branch === newer.workspace.branch
			? other.workspace.path
			: undefined);
	const merged: BuildView = {
		...newer,
		machine: { ...newer.machine, ...(label !== undefined && { label }) },
		...(newer.workspace && { workspace: { ...newer.workspace, ...(path !== undefined && { path }) } }),
		log: { lastSeq: Math.max(next.log.lastSeq, current.log.lastSeq) },
	};
	const copy = [...builds];
	copy[at] = merged;
	return copy;
}

/**
 * Lines added to a log, by seq (a line held already is kept). `dropThrough` first drops held lines up to that seq
 * (a page fetched past them). Only the newest contiguous lines stay, so a gap always sits before the first line
 * held, where "older lines" fetches it; `older` says whether lines may remain before it.
 */
export function mergeLog(
	log: BuildLog | undefined,
	lines: readonly LogLine[],
	options: { older?: boolean; loaded?: boolean; dropThrough?: number } = {},
): BuildLog {
	const bySeq = new Map<number, LogLine>();
	for (const line of log?.lines ?? [])
		if (options.dropThrough === undefined || line.seq > options.dropThrough) bySeq.set(line.seq, line);
	for (const line of lines) if (!bySeq.has(line.seq)) bySeq.set(line.seq, line);
	let all = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
	let older = options.older ?? log?.older ?? (all[0] !== undefined && all[0].seq > 1);
	let start = all.length - 1;
	while (start > 0 && all[start - 1]!.seq === all[start]!.seq - 1) start--;
	if (start > 0) {
		all = all.slice(start);
		older = true;
	}
	if (all.length > LOG_LINES_HELD) {
		all = all.slice(-LOG_LINES_HELD);
		older = true;
	}
	return { lines: all, older, loaded: options.loaded ?? log?.loaded ?? false };
}

/** The state with lines added to a build's log (live, or a page the page fetched); the build's last seq follows. */
export function withLogLines(
	state: DocumentState,
	buildId: string,
	lines: readonly LogLine[],
	options: Parameters<typeof mergeLog>[2] = {},
): DocumentState {
	const log = mergeLog(state.buildLogs[buildId], lines, options);
	const last = lines.reduce((max, l) => Math.max(max, l.seq), 0);
	const builds = state.builds.map((b) =>
		b.id === buildId && b.log.lastSeq < last ? { ...b, log: { lastSeq: last } } : b,
	);
	return { ...state, builds, buildLogs: { ...state.buildLogs, [buildId]: log } };
}

/**
 * A freshly loaded state keeps the log lines the page held before (lines are not part of the load): those of runs
 * still listed, merged with any that came live while it loaded. A line missed meanwhile shows as the log being
 * behind its run's last seq, which the log fetches.
 */
export function carryBuildLogs(previous: DocumentState, next: DocumentState): DocumentState {
	const listed = new Set(next.builds.map((b) => b.id));
	const buildLogs = { ...next.buildLogs };
	for (const [id, log] of Object.entries(previous.buildLogs)) {
		if (!listed.has(id)) continue;
		const arrived = buildLogs[id];
		buildLogs[id] = arrived ? mergeLog(log, arrived.lines) : log;
	}
	return { ...next, buildLogs };
}

/** Whether the run has lines after the last one held (missed while away, or not fetched yet). */
export function logBehind(build: BuildView, log: BuildLog | undefined): boolean {
	return build.log.lastSeq > (log?.lines.at(-1)?.seq ?? 0);
}
