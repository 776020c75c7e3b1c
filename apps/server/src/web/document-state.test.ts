import { describe, expect, test } from "bun:test";
import type { BuildView, DecisionView, DocumentPayload, LogLine, MessageView } from "./api";
import {
	applyEvent,
	type BuildLog,
	carryBuildLogs,
	type DocumentState,
	LOG_LINES_HELD,
	logBehind,
	mergeLog,
	withLogLines,
} from "./document-state";

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
		model: { choice: {} },
		decisions: [],
		runs: [],
		builds: [],
		buildLogs: {},
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

	test("a deleted message (a failed reply a person retried) leaves the page; one never loaded changes nothing", () => {
		let s = state({
			messages: [message({ id: "m0", seq: 1 }), message({ id: "m1", seq: 2, status: "failed" })],
		});
		s = applyEvent(s, { type: "message.deleted", documentId: "d1", messageId: "m1" });
		expect(s.messages.map((m) => m.id)).toEqual(["m0"]);
		expect(applyEvent(s, { type: "message.deleted", documentId: "d1", messageId: "zz" }).messages).toEqual(
			s.messages,
		);
	});

	test("a decision keeps its highest version", () => {
		const d = (version: number, status: DecisionView["status"]) =>
			({ id: "x", seq: 1, version, status }) as DecisionView;
		let s = applyEvent(state(), { type: "decision.created", documentId: "d1", decision: d(0, "open") });
		s = applyEvent(s, { type: "decision.updated", documentId: "d1", decision: d(2, "answered") });
		s = applyEvent(s, { type: "decision.updated", documentId: "d1", decision: d(1, "open") });
		expect(s.decisions.map((x) => x.status)).toEqual(["answered"]);
	});

	test("a new decision naming an image the page does not know marks the page stale, to learn the new image", () => {
		const known = `/images/${"a".repeat(64)}.png`;
		const fresh = `/images/${"b".repeat(64)}.webp`;
		const asking = (id: string, preview: string) =>
			({
				id,
				seq: 1,
				version: 0,
				status: "open",
				question: {
					method: "questionnaire",
					params: {
						questions: [
							{ question: "Which?", header: "", options: [{ label: "A", description: "", preview }] },
						],
					},
				},
			}) as DecisionView;
		const loaded = state({ payload: { ...state().payload, images: [known] } });
		const created = (decision: DecisionView) =>
			applyEvent(loaded, { type: "decision.created", documentId: "d1", decision });
		expect(created(asking("x", `![A](${known})`)).stale).toBe(false);
		expect(created(asking("x", "no image")).stale).toBe(false);
		expect(created(asking("y", `![A](${fresh})`)).stale).toBe(true);
		// An update of a decision the page loaded never reloads it.
		expect(
			applyEvent(loaded, {
				type: "decision.updated",
				documentId: "d1",
				decision: asking("y", `![A](${fresh})`),
			}).stale,
		).toBe(false);
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

const build = (over: Partial<BuildView> = {}): BuildView => ({
	id: "run_a",
	documentId: "d1",
	kind: "build",
	brief: "Implement the plan in this document.",
	base: "a".repeat(40),
	requestedBy: "ana",
	machine: { id: "mch_1", owner: "ana", online: true },
	status: "running",
	displayStatus: "running",
	live: true,
	stages: [],
	pullRequests: [],
	actions: ["stop", "discard"],
	log: { lastSeq: 0 },
	createdAt: 10,
	updatedAt: 10,
	...over,
});

const line = (seq: number, text = `line ${seq}`): LogLine => ({ seq, at: seq, kind: "output", text });
const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => line(from + i));
const seqs = (log: BuildLog | undefined) => log?.lines.map((l) => l.seq);

const updated = (builds: BuildView[], removed: string[] = []) =>
	({ type: "builds.updated", documentId: "d1", builds, removed }) as const;
const logEvent = (id: string, l: LogLine[]) =>
	({ type: "build.log", documentId: "d1", build: id, lines: l }) as const;

describe("builds and their logs", () => {
	test("runs are listed newest first; an older view of a run changes nothing, the same one twice neither", () => {
		let s = applyEvent(state(), updated([build({ id: "run_a", createdAt: 10 })]));
		s = applyEvent(s, updated([build({ id: "run_b", createdAt: 20, status: "offered" })]));
		expect(s.builds.map((b) => b.id)).toEqual(["run_b", "run_a"]);
		const paused = build({ status: "paused", displayStatus: "paused", updatedAt: 30 });
		s = applyEvent(s, updated([paused]));
		const again = applyEvent(s, updated([paused]));
		expect(again.builds).toEqual(s.builds);
		s = applyEvent(s, updated([build({ status: "running", updatedAt: 20 })]));
		expect(s.builds.find((b) => b.id === "run_a")?.status).toBe("paused");
		// The machine coming or going changes how a run shows without changing the run: same updatedAt, taken.
		s = applyEvent(
			s,
			updated([
				build({
					status: "paused",
					displayStatus: "machine-offline",
					offlineUntil: 99,
					updatedAt: 30,
					machine: { id: "mch_1", owner: "ana", online: false },
				}),
			]),
		);
		expect(s.builds.find((b) => b.id === "run_a")).toMatchObject({
			displayStatus: "machine-offline",
			offlineUntil: 99,
		});
	});

	test("the owner's label and workspace path, read through the API, outlive live events that carry neither", () => {
		let s = applyEvent(
			state(),
			updated([
				build({
					machine: { id: "mch_1", owner: "ana", online: true, label: "ana's laptop" },
					workspace: { branch: "chopin/run_a", path: "/home/ana/w" },
				}),
			]),
		);
		s = applyEvent(s, updated([build({ updatedAt: 11, workspace: { branch: "chopin/run_a" } })]));
		expect(s.builds[0]!.machine.label).toBe("ana's laptop");
		expect(s.builds[0]!.workspace).toEqual({ branch: "chopin/run_a", path: "/home/ana/w" });
		// Another branch is another workspace: its path is not guessed.
		s = applyEvent(s, updated([build({ updatedAt: 12, status: "paused", workspace: { branch: "other" } })]));
		expect(s.builds[0]!.workspace).toEqual({ branch: "other" });
		// The owner's answer overtaken by an event still brings the path, and nothing else of its older state.
		s = applyEvent(
			s,
			updated([
				build({ updatedAt: 11, status: "running", workspace: { branch: "other", path: "/home/ana/o" } }),
			]),
		);
		expect(s.builds[0]).toMatchObject({
			status: "paused",
			workspace: { branch: "other", path: "/home/ana/o" },
		});
	});

	test("a discarded run leaves the list with its log; discarding twice changes nothing", () => {
		let s = applyEvent(state(), updated([build({ id: "run_a" }), build({ id: "run_b", createdAt: 5 })]));
		s = applyEvent(s, logEvent("run_a", [line(1)]));
		s = applyEvent(s, updated([], ["run_a"]));
		expect(s.builds.map((b) => b.id)).toEqual(["run_b"]);
		expect(s.buildLogs.run_a).toBeUndefined();
		expect(applyEvent(s, updated([], ["run_a"]))).toEqual(s);
	});

	test("live lines are added once, in order, and move the run's last seq", () => {
		let s = applyEvent(state(), updated([build({ log: { lastSeq: 0 } })]));
		s = applyEvent(s, logEvent("run_a", lines(1, 3)));
		s = applyEvent(s, logEvent("run_a", lines(2, 5)));
		s = applyEvent(s, logEvent("run_a", lines(4, 5)));
		expect(seqs(s.buildLogs.run_a)).toEqual([1, 2, 3, 4, 5]);
		expect(s.buildLogs.run_a).toMatchObject({ older: false, loaded: false });
		expect(s.builds[0]!.log.lastSeq).toBe(5);
		expect(logBehind(s.builds[0]!, s.buildLogs.run_a)).toBe(false);
		// An older view of the run does not take its last seq back.
		s = applyEvent(s, updated([build({ updatedAt: 11, log: { lastSeq: 2 } })]));
		expect(s.builds[0]!.log.lastSeq).toBe(5);
	});

	test("a gap keeps only the newest contiguous lines, and says older ones remain", () => {
		const log = mergeLog(mergeLog(undefined, lines(1, 3), { loaded: true }), lines(7, 8));
		expect(seqs(log)).toEqual([7, 8]);
		expect(log.older).toBe(true);
		// Paging the gap back in joins them again.
		const joined = mergeLog(mergeLog(log, lines(4, 6), { older: true }), lines(1, 3), { older: false });
		expect(seqs(joined)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
		expect(joined).toMatchObject({ older: false, loaded: true });
	});

	test("a fetched tail drops held lines before it; at most LOG_LINES_HELD lines are held", () => {
		const held = mergeLog(undefined, lines(1, 4));
		const tail = mergeLog(held, lines(50, 60), { loaded: true, dropThrough: 49, older: true });
		expect(seqs(tail)).toEqual(lines(50, 60).map((l) => l.seq));
		expect(tail).toMatchObject({ older: true, loaded: true });
		const big = mergeLog(undefined, lines(1, LOG_LINES_HELD + 10), { older: false });
		expect(big.lines.length).toBe(LOG_LINES_HELD);
		expect(big.lines[0]!.seq).toBe(11);
		expect(big.older).toBe(true);
	});

	test("a page fetched for a run adds its lines and marks the log loaded", () => {
		let s = applyEvent(state(), updated([build({ log: { lastSeq: 3 } })]));
		expect(logBehind(s.builds[0]!, s.buildLogs.run_a)).toBe(true);
		s = withLogLines(s, "run_a", lines(1, 3), { loaded: true, older: false });
		expect(s.buildLogs.run_a).toMatchObject({ loaded: true, older: false });
		expect(logBehind(s.builds[0]!, s.buildLogs.run_a)).toBe(false);
	});

	test("a reload keeps the lines held, merged with those that came while it loaded; what was missed is fetched", () => {
		let before = applyEvent(state(), updated([build({ log: { lastSeq: 3 } }), build({ id: "run_gone" })]));
		before = withLogLines(before, "run_a", lines(1, 3), { loaded: true, older: false });
		before = withLogLines(before, "run_gone", lines(1, 1), { loaded: true });
		// Reloaded after a drop: lines 4 to 6 were missed, 7 came while it loaded; run_gone was discarded meanwhile.
		let next = applyEvent(state(), updated([build({ updatedAt: 20, log: { lastSeq: 6 } })]));
		next = applyEvent(next, logEvent("run_a", [line(7)]));
		const carried = carryBuildLogs(before, next);
		expect(Object.keys(carried.buildLogs)).toEqual(["run_a"]);
		expect(seqs(carried.buildLogs.run_a)).toEqual([7]);
		// Lines 4 to 6 are before the first held now: "Show older lines" fetches them.
		expect(carried.buildLogs.run_a).toMatchObject({ older: true, loaded: true });
		// Missed with nothing after them yet: the log is behind its run, and fetches from where it is.
		const behind = carryBuildLogs(before, applyEvent(state(), updated([build({ log: { lastSeq: 6 } })])));
		expect(seqs(behind.buildLogs.run_a)).toEqual([1, 2, 3]);
		expect(logBehind(behind.builds[0]!, behind.buildLogs.run_a)).toBe(true);
		// Nothing missed: the lines held carry over as they were.
		const quiet = carryBuildLogs(before, applyEvent(state(), updated([build({ log: { lastSeq: 3 } })])));
		expect(seqs(quiet.buildLogs.run_a)).toEqual([1, 2, 3]);
		expect(logBehind(quiet.builds[0]!, quiet.buildLogs.run_a)).toBe(false);
	});
});
