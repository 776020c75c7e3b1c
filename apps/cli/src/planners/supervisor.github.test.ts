// The supervisor with a GitHub-mode server (the GitHub emulator): the launch gets the owner's GitHub token in its
// environment and its 0600 file, and the file is renewed 25 minutes before the token expires.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { Backoff } from "@chopin/agent-link/backoff";
import { ManualClock } from "@chopin/agent-link/clock";
import { type GitHubEmulator, startGitHubEmulator } from "../../../server/src/testing/github-emulator";
import { testFixture } from "../../../server/src/testing/github-emulator-test-kit";
import { ACCESS_TOKEN_TTL_S } from "../../../server/src/testing/github-tokens";
import { pairWithGitHub, type Target } from "../../../server/src/testing/machines";
import { startTestServer, type TestServer } from "../../../server/src/testing/server";
import { signInWithGitHub } from "../../../server/src/testing/sign-in";
import { ServerApi } from "../server-link/server-api";
import { readLog } from "../testing/cli-process";
import { createTestContext, makeTempDir, type TestContext } from "../testing/context";
import { makeRepo } from "../testing/git";
import { CheckoutGate } from "../workspaces/gate";
import { PlannerSupervisor } from "./supervisor";

const PUBLIC_URL = "http://chopin.test";
const BACKEND = join(import.meta.dir, "..", "testing", "fixtures", "planner-backend.sh");

let clock: ManualClock;
let gh: GitHubEmulator;
let server: TestServer | undefined;
let ctx: TestContext | undefined;
let dir = "";
let supervisor: PlannerSupervisor | undefined;

beforeEach(async () => {
	clock = new ManualClock(Date.now());
	const fixture = testFixture();
	fixture.apps[0]!.redirectUri = PUBLIC_URL;
	gh = await startGitHubEmulator({ fixture, clock });
});

afterEach(async () => {
	await supervisor?.stop("test over");
	await server?.close();
	await gh.stop();
	ctx?.cleanup();
	if (dir) rmSync(dir, { recursive: true, force: true });
});

async function until(check: () => boolean, what: string): Promise<void> {
	for (let i = 0; i < 1000; i++) {
		if (check()) return;
		await Bun.sleep(10);
	}
	throw new Error(`timed out waiting for ${what}`);
}

test("the GitHub token reaches the backend in its environment and a 0600 file, renewed 25 minutes before expiry", async () => {
	server = await startTestServer({ clock, env: { PUBLIC_URL, ...gh.env() } });
	const target: Target = { fetch: (req) => server!.fetch(req), publicUrl: PUBLIC_URL };
	const { jar } = await signInWithGitHub(target, "hubot");
	const { credential } = await pairWithGitHub(target, jar, "hubot");
	const document = await server.context.domain.documents.create({
		repository: "score-team/score",
		title: "Plan",
		createdBy: "hubot",
	});
	dir = makeTempDir();
	const checkout = await makeRepo(join(dir, "score"));
	ctx = createTestContext({ env: { HOME: dir } });
	const api = new ServerApi({ ...ctx, clock }, server.url);
	supervisor = new PlannerSupervisor(
		{ ref: document.id, checkout, repository: "score-team/score", source: "config" },
		{
			clock,
			log: ctx.log,
			secrets: ctx.secrets,
			platform: "linux",
			server: server.url,
			baseDir: join(dir, "state"),
			command: [BACKEND],
			env: {},
			baseEnv: { PATH: process.env.PATH },
			sandbox: { kind: "none", writable: [], hidden: [] },
			git: { spawn: ctx.spawn, env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: "/dev/null" } },
			gate: new CheckoutGate(),
			cloneUrl: () => {
				throw new Error("no clone expected");
			},
			plannerCredential: (doc) => api.plannerCredential(credential, doc),
			githubToken: () => api.githubToken(credential),
			onEvent: () => {},
			onChange: () => {},
			onMachineRefused: () => {},
			backoff: Backoff.exponential({ initial: 1_000, max: 300_000 }),
		},
	);
	void supervisor.start();
	await until(() => supervisor!.state === "running", "the backend to run");
	const file = supervisor.tokenFiles!.github;
	const first = readFileSync(file, "utf8");
	expect(first.length).toBeGreaterThan(10);
	expect(statSync(file).mode & 0o777).toBe(0o600);
	await until(
		() => readLog(ctx!.paths.logFile).some((l) => String(l.msg).startsWith("secrets:")),
		"the backend's output",
	);
	expect(JSON.stringify(readLog(ctx.paths.logFile))).not.toContain(first);
	const line = readLog(ctx.paths.logFile)
		.map((l) => String(l.msg))
		.find((l) => l.startsWith("github:"));
	expect(line).toMatch(
		new RegExp(`^github: file=${file} expires=\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z token=\\[redacted\\]$`),
	);

	// The emulator's user tokens live 8 hours; the file is replaced at 7 h 35 min, and not before.
	const renewAt = ACCESS_TOKEN_TTL_S * 1000 - 25 * 60_000;
	await clock.advance(renewAt - 1_000);
	expect(readFileSync(file, "utf8")).toBe(first);
	await clock.advance(1_000);
	await until(() => readFileSync(file, "utf8") !== first, "the renewed GitHub token file");
	expect(JSON.stringify(readLog(ctx.paths.logFile))).not.toContain(readFileSync(file, "utf8"));
});
