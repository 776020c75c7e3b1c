// A paired machine's access, checked with its own GitHub authorization on every request that depends on it (a
// Planner credential, a hello, each start and turn of a Planner it attached): a removed push access is seen at once,
// and an unchanged one costs a conditional request GitHub answers 304, which spends no rate limit.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { wording } from "../agent/wording";
import { runnableKinds } from "../store/testing";
import { type AgentSocket, connectAgentSocket } from "../testing/agent-socket";
import { type GitHubEmulator, startGitHubEmulator } from "../testing/github-emulator";
import { testFixture } from "../testing/github-emulator-test-kit";
import { cliRequest, connectMachine, hello, pairWithGitHub, type Target } from "../testing/machines";
import { startTestServer, type TestServer } from "../testing/server";
import { signInWithGitHub } from "../testing/sign-in";

const PUBLIC_URL = "http://chopin.test";
const REPO = "score-team/score";
const REPO_PATH = `/api/v3/repos/${REPO}`;

let clock: ManualClock;
let gh: GitHubEmulator;
const open: TestServer[] = [];
const closers: (() => void)[] = [];

beforeEach(async () => {
	clock = new ManualClock();
	const fixture = testFixture();
	fixture.apps[0]!.redirectUri = PUBLIC_URL;
	gh = await startGitHubEmulator({ fixture, clock });
});

afterEach(async () => {
	for (const close of closers.splice(0)) close();
	for (const s of open.splice(0)) await s.close();
	gh.verify();
	await gh.stop();
});

/** hubot's machine, paired for score-team/score with its own GitHub grant, and a document there. */
async function machineServer(store: "sqlite" | "postgres") {
	const server = await startTestServer({ clock, store, env: { PUBLIC_URL, ...gh.env() } });
	open.push(server);
	const target: Target = { fetch: (req) => server.fetch(req), publicUrl: PUBLIC_URL };
	const { jar } = await signInWithGitHub(target, "hubot");
	const paired = await pairWithGitHub(target, jar, "hubot");
	const document = await server.context.domain.documents.create({
		repository: REPO,
		title: "Plan",
		createdBy: "hubot",
	});
	const ask = () =>
		cliRequest(target, "POST", "/api/connector/planner", {
			credential: paired.credential,
			body: { document: document.id },
		});
	/** A hello on a fresh control channel: what the server answers first. */
	const helloAnswer = async () => {
		const client = await connectMachine(server.url, paired.credential);
		closers.push(() => client.close());
		client.send(hello([REPO]));
		return client.next();
	};
	return { server, document, ask, helloAnswer };
}

for (const kind of runnableKinds()) {
	describe(`a machine's access [${kind}]`, () => {
		test("push removed: the very next Planner credential is 403 and the next hello is refused, with no time passing", async () => {
			const { ask, helloAnswer } = await machineServer(kind);
			expect((await ask()).status).toBe(200);
			expect(await helloAnswer()).toMatchObject({
				type: "welcome",
				repositories: [{ repository: REPO, access: "ok" }],
			});
			gh.setPermission(REPO, "hubot", "read");
			const refused = await ask();
			expect(refused.status).toBe(403);
			expect(await refused.json()).toMatchObject({ code: "repository-forbidden" });
			expect(await helloAnswer()).toMatchObject({ type: "revoked", code: "repository-access-lost" });
		});

		test("repeat checks are conditional: 304s that spend none of the owner's rate limit", async () => {
			const { ask, helloAnswer } = await machineServer(kind);
			expect((await ask()).status).toBe(200);
			const used = gh.rateLimit("hubot").used;
			gh.clearRequests();
			expect((await ask()).status).toBe(200);
			expect((await helloAnswer()).type).toBe("welcome");
			expect((await ask()).status).toBe(200);
			expect(gh.requests({ path: REPO_PATH }).map((r) => r.status)).toEqual([304, 304, 304]);
			expect(gh.rateLimit("hubot").used).toBe(used);
		});

		test("a Planner attached with the machine's credential: the very next turn after push was removed is refused", async () => {
			const { server, document, ask } = await machineServer(kind);
			const { token } = (await (await ask()).json()) as { token: string };
			const socket: AgentSocket = await connectAgentSocket({ url: server.url, token });
			closers.push(() => socket.terminate());
			socket.send({ type: "attach", version: 1, document: document.id });
			await socket.expect("attached");
			gh.removePermission(REPO, "hubot");
			expect(
				await server.context.planner.handleMessage({
					documentId: document.id,
					author: "hubot",
					body: "@chopin hi",
				}),
			).toMatchObject({ status: "sent", turn: true });
			expect(await socket.expect("refused")).toEqual({
				type: "refused",
				code: "access-revoked",
				message: wording.accessLost("hubot", REPO),
			});
			expect((await socket.closed).code).toBe(4403);
		});
	});
}
