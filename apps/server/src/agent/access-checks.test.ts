// Spec "Ownership": admission and push or administration access are checked again before every start and every
// turn, with nothing kept that can hide a change; a loss refuses access-revoked (4403) and fails the turn, GitHub
// failing fails the request and leaves the link open. Repeat checks are conditional requests GitHub answers 304.
import { afterEach, describe, expect, test } from "bun:test";
import type { StoreKind } from "../store/store";
import { runnableKinds } from "../store/testing";
import { AgentFixture } from "../testing/agent-fixture";
import { wording } from "./wording";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const REPO = "score-team/score";
const REPO_PATH = `/api/v3/repos/${REPO}`;

async function start(options: { store?: StoreKind; env?: Record<string, string> } = {}) {
	f = await AgentFixture.start({ mode: "github", ...options });
	const doc = await f.createDocument();
	await f.signIn("octocat");
	const { socket } = await f.attach("octocat", doc.id);
	return { f, documentId: doc.id, socket };
}

/** The last Chat message once it has ended (a Planner reply that failed or finished). */
async function lastReplyEnded(f: AgentFixture, documentId: string) {
	await f.until(async () => {
		const last = (await f.chat(documentId)).at(-1);
		return last?.role === "planner" && (last.status === "failed" || last.status === "done");
	}, "the reply to end");
	return (await f.chat(documentId)).at(-1)!;
}

/** Ends a Chat turn as the client would; its session is destroyed once its reply is done. */
async function finishTurn(
	f: AgentFixture,
	socket: Socket,
	documentId: string,
	turn: { session: string; turn: string },
) {
	socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
	expect(await socket.expect("destroy")).toEqual({ type: "destroy", session: turn.session });
	expect(await lastReplyEnded(f, documentId)).toMatchObject({ status: "done" });
}

type Socket = Awaited<ReturnType<typeof start>>["socket"];

const refusedAndClosed = async (socket: Socket) => ({
	refused: await socket.expect("refused"),
	code: (await socket.closed).code,
});

const revoked = {
	refused: { type: "refused", code: "access-revoked", message: wording.accessLost("octocat", REPO) },
	code: 4403,
} as const;

for (const store of runnableKinds()) {
	describe(`push access removed at GitHub [${store}]`, () => {
		test("the very next start is refused access-revoked (4403) and its turn fails, with no time passing", async () => {
			const { f, documentId, socket } = await start({ store });
			f.gh!.setPermission(REPO, "octocat", "read");
			expect(
				await f.ctx.planner.handleMessage({ documentId, author: "hubot", body: "@chopin what next?" }),
			).toMatchObject({ status: "sent", turn: true });
			expect(await refusedAndClosed(socket)).toEqual(revoked);
			const reply = await lastReplyEnded(f, documentId);
			expect(reply).toMatchObject({ status: "failed", error: wording.accessLost("octocat", REPO) });
			expect(f.ctx.planner.status(documentId)).toEqual({ state: "unattached" });
		});

		test("removed while the session starts: the check before the turn refuses it, and no turn is sent", async () => {
			const { f, documentId, socket } = await start({ store });
			await f.ctx.planner.handleMessage({ documentId, author: "hubot", body: "@chopin what next?" });
			const begun = await socket.expect("start");
			f.gh!.removePermission(REPO, "octocat");
			socket.send({ type: "started", session: begun.session });
			expect(await refusedAndClosed(socket)).toEqual(revoked);
			expect(socket.received.map((m) => m.type)).not.toContain("turn");
			expect(await lastReplyEnded(f, documentId)).toMatchObject({ status: "failed" });
		});
	});
}

describe("the checks before every start and turn (github)", () => {
	test("a background job's start is checked too", async () => {
		const { f, documentId, socket } = await start();
		f.gh!.setPermission(REPO, "octocat", "read");
		expect(await f.ctx.planner.runJob(documentId, { prompt: "Summarise." })).toEqual({
			status: "failed",
			message: wording.accessLost("octocat", REPO),
		});
		expect(await refusedAndClosed(socket)).toEqual(revoked);
	});

	test("admission lost (ADMIT org:score-team, the owner left it): the very next turn is refused", async () => {
		const { f, documentId, socket } = await start({ env: { ADMIT: "org:score-team" } });
		f.gh!.leaveOrganization("octocat", "score-team");
		await f.ctx.planner.handleMessage({ documentId, author: "octocat", body: "@chopin hi" });
		expect(await refusedAndClosed(socket)).toEqual(revoked);
		expect(await lastReplyEnded(f, documentId)).toMatchObject({ status: "failed" });
	});

	test("repeat checks are conditional: GitHub answers 304, which spends none of the rate limit", async () => {
		const { f, documentId, socket } = await start({ env: { ADMIT: "org:score-team" } });
		const used = f.gh!.rateLimit("octocat").used;
		f.gh!.clearRequests();
		for (let i = 0; i < 3; i++) {
			await finishTurn(f, socket, documentId, await f.chatTurn(socket, documentId, "octocat"));
		}
		// Two checks a turn (before its start, before its turn), each asking admission and then permission.
		const repos = f.gh!.requests({ path: REPO_PATH });
		const orgs = f.gh!.requests({ path: "/api/v3/user/orgs" });
		expect(repos.map((r) => r.status)).toEqual([304, 304, 304, 304, 304, 304]);
		expect(orgs.map((r) => r.status)).toEqual([304, 304, 304, 304, 304, 304]);
		expect(f.gh!.rateLimit("octocat").used).toBe(used);
		// A change is seen at once: the conditional request gets a 200 with the new answer.
		f.gh!.setPermission(REPO, "octocat", "triage");
		await f.ctx.planner.handleMessage({ documentId, author: "octocat", body: "@chopin again" });
		expect((await refusedAndClosed(socket)).code).toBe(4403);
		expect(f.gh!.requests({ path: REPO_PATH }).at(-1)!.status).toBe(200);
	});

	test("GitHub unavailable during the check: the turn fails, the link stays open, no kept answer stands in", async () => {
		const { f, documentId, socket } = await start({ env: { ADMIT: "org:score-team" } });
		await finishTurn(f, socket, documentId, await f.chatTurn(socket, documentId, "octocat"));
		// Admission answers (304), then the permission request fails: the check is cut off half way.
		f.gh!.inject({ kind: "status", status: 502, pathPrefix: REPO_PATH });
		await f.ctx.planner.handleMessage({ documentId, author: "octocat", body: "@chopin again" });
		expect(await lastReplyEnded(f, documentId)).toMatchObject({
			status: "failed",
			error: wording.githubUnavailable(),
		});
		expect(f.gh!.requests({ path: REPO_PATH }).at(-1)).toMatchObject({ status: 502, fault: "status" });
		expect(f.ctx.planner.status(documentId).state).toBe("attached");
		await f.sync(socket);
		expect(socket.received.map((m) => m.type)).not.toContain("refused");
		// GitHub back: the next turn runs.
		const next = await f.chatTurn(socket, documentId, "octocat", "@chopin once more");
		expect(next.type).toBe("turn");
	});

	test("a rate-limited check is GitHub unavailable too: the turn fails and the link stays open", async () => {
		const { f, documentId, socket } = await start();
		f.gh!.inject({ kind: "rate-limit", style: "primary", pathPrefix: REPO_PATH });
		await f.ctx.planner.handleMessage({ documentId, author: "octocat", body: "@chopin hi" });
		expect(await lastReplyEnded(f, documentId)).toMatchObject({
			status: "failed",
			error: wording.githubUnavailable(),
		});
		expect(f.ctx.planner.status(documentId).state).toBe("attached");
		await f.sync(socket);
		expect(socket.received.map((m) => m.type)).not.toContain("refused");
	});

	test("a host tool call right after push was removed is denied, with no time passing", async () => {
		const { f, documentId, socket } = await start();
		const turn = await f.chatTurn(socket, documentId, "octocat");
		f.gh!.setPermission(REPO, "octocat", "read");
		socket.send({
			type: "host-tool-call",
			session: turn.session,
			turn: turn.turn,
			toolCallId: "c1",
			toolName: "read_plan",
			input: "{}",
		});
		const result = await socket.nextOf("host-tool-result");
		expect(result.output).toEqual({
			type: "execution-denied",
			reason: wording.accessLost("octocat", REPO),
		});
	});
});

describe("the checks before every start and turn (local)", () => {
	test("each turn checks the owner's sign-in, admission and permission again, without GitHub", async () => {
		f = await AgentFixture.start({ mode: "local" });
		const doc = await f.createDocument();
		await f.signIn("alice");
		const { socket } = await f.attach("alice", doc.id);
		for (let i = 0; i < 2; i++) {
			await finishTurn(f, socket, doc.id, await f.chatTurn(socket, doc.id, "bob"));
		}
		// The sign-in ends between the start and its turn: the check before the turn finds it.
		await f.ctx.planner.handleMessage({ documentId: doc.id, author: "bob", body: "@chopin again" });
		const begun = await socket.expect("start");
		await f.signOut("alice");
		socket.send({ type: "started", session: begun.session });
		expect((await refusedAndClosed(socket)).code).toBe(4401);
		expect(await lastReplyEnded(f, doc.id)).toMatchObject({ status: "failed" });
	});
});
