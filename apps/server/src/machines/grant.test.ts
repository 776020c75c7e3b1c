import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { githubTokenSchema } from "@chopin/agent-link/machine";
import { runnableKinds } from "../store/testing";
import { type GitHubEmulator, startGitHubEmulator } from "../testing/github-emulator";
import { api, testFixture } from "../testing/github-emulator-test-kit";
import { cliRequest, helloMachine, pageRequest, pairingStartBody, pairWithGitHub } from "../testing/machines";
import { startTestServer, type TestServer } from "../testing/server";
import { signInWithGitHub } from "../testing/sign-in";

const PUBLIC_URL = "http://chopin.test";
const HOUR = 3_600_000;

let clock: ManualClock;
let gh: GitHubEmulator;
const open: TestServer[] = [];
const sockets: { close(): void }[] = [];

beforeEach(async () => {
	clock = new ManualClock();
	const fixture = testFixture();
	fixture.apps[0]!.redirectUri = PUBLIC_URL;
	gh = await startGitHubEmulator({ fixture, clock });
});

afterEach(async () => {
	for (const s of sockets.splice(0)) s.close();
	for (const s of open.splice(0)) await s.close();
	gh.verify();
	await gh.stop();
});

async function serve(store: "sqlite" | "postgres" = "sqlite") {
	const server = await startTestServer({ clock, store, env: { PUBLIC_URL, ...gh.env() } });
	open.push(server);
	const target = { fetch: (req: Request) => server.fetch(req), publicUrl: PUBLIC_URL };
	return { server, target };
}

const tokenCalls = () => gh.requests({ path: "/login/oauth/access_token" }).length;

for (const kind of runnableKinds()) {
	describe(`GitHub mode: the machine's own grant [${kind}]`, () => {
		test("confirm sends the browser for a fresh grant, which becomes the machine's own authorization", async () => {
			const { server, target } = await serve(kind);
			const { jar } = await signInWithGitHub(target, "hubot");
			expect(tokenCalls()).toBe(1);
			const paired = await pairWithGitHub(target, jar, "hubot", { autoRun: true });
			// A second code exchange: the machine's pair is not the session's.
			expect(tokenCalls()).toBe(2);
			expect(paired.grant.headers.get("location")).toBe(`/pair/${paired.pairingId}`);
			const view = await pageRequest(target, jar, "GET", `/api/connector/pairings/${paired.pairingId}`);
			expect(((await view.json()) as { pairing: { status: string } }).pairing.status).toBe("claimed");

			const row = await server.context.store.one(
				server.context.store
					.sql`SELECT kind, login, access_token_enc, refresh_token_enc, expires_at FROM machine_authorizations WHERE machine_id = ${paired.machineId}`,
			);
			expect(row).toMatchObject({ kind: "github", login: "hubot", expires_at: clock.now() + 8 * HOUR });
			const sealed = Buffer.from(row!.refresh_token_enc as Uint8Array).toString("latin1");
			expect(sealed).not.toContain("ghr_");

			// The machine's token acts as hubot at GitHub.
			const res = await cliRequest(target, "GET", "/api/connector/github-token", {
				credential: paired.credential,
			});
			const token = githubTokenSchema.parse(await res.json());
			expect(token.expiresAt).toBe(clock.now() + 8 * HOUR);
			expect(((await (await api(gh, "/user", token.token)).json()) as { login: string }).login).toBe("hubot");

			// The session renews its own pair; the machine's keeps working, then renews on its own.
			await clock.advance(8 * HOUR - 4 * 60_000);
			expect((await pageRequest(target, jar, "GET", "/api/me")).status).toBe(200);
			const renewed = githubTokenSchema.parse(
				await (
					await cliRequest(target, "GET", "/api/connector/github-token", { credential: paired.credential })
				).json(),
			);
			expect(renewed.token).not.toBe(token.token);
			expect(renewed.expiresAt).toBe(clock.now() + 8 * HOUR);
			expect((await api(gh, "/user", renewed.token)).status).toBe(200);
			// ...and a server restart reads the renewed pair back.
			await server.restart();
			const again = await cliRequest(target, "GET", "/api/connector/github-token", {
				credential: paired.credential,
			});
			expect(githubTokenSchema.parse(await again.json()).token).toBe(renewed.token);
		});
	});
}

describe("GitHub mode: confirming", () => {
	test("the grant must be the confirming person's own: another account is refused", async () => {
		const { server, target } = await serve();
		const { jar } = await signInWithGitHub(target, "hubot");
		const paired = await pairWithGitHub(target, jar, "hubot", { grantAs: "octocat" });
		expect(paired.grant.status).toBe(403);
		expect(await paired.grant.text()).toContain("pairing-account-mismatch");
		expect(await server.context.store.many(server.context.store.sql`SELECT id FROM machines`)).toEqual([]);
	});

	test("a person who can only read the repository is refused at confirm", async () => {
		const { target } = await serve();
		const { jar } = await signInWithGitHub(target, "reader");
		const started = await cliRequest(target, "POST", "/api/connector/pairings", {
			body: pairingStartBody(["score-team/score"]),
		});
		const { id, code } = (await started.json()) as { id: string; code: string };
		const res = await pageRequest(target, jar, "POST", `/api/connector/pairings/${id}/confirm`, {
			code,
			autoRun: false,
		});
		expect(res.status).toBe(403);
		expect(await res.json()).toMatchObject({ code: "repository-forbidden" });
	});

	test("a renewal that fails for good marks the machine machine-reauthorize, and its channel closes 4412", async () => {
		const { server, target } = await serve();
		const { jar } = await signInWithGitHub(target, "hubot");
		const { credential, machineId } = await pairWithGitHub(target, jar, "hubot");
		// 20 minutes left on the machine's token: the next GitHub token request renews it.
		await clock.advance(8 * HOUR - 20 * 60_000);
		const { client } = await helloMachine(server.url, credential, ["score-team/score"]);
		sockets.push(client);
		const heard: string[] = [];
		server.context.machines.onRevoked((id, reason) => heard.push(`${id}:${reason}`));
		gh.revokeAuthorization("hubot");
		const res = await cliRequest(target, "GET", "/api/connector/github-token", { credential });
		expect(res.status).toBe(401);
		expect(await res.json()).toMatchObject({ code: "machine-reauthorize" });
		expect(await client.next()).toMatchObject({ type: "revoked", code: "machine-reauthorize" });
		expect((await client.closed).code).toBe(4412);
		await server.context.machines.settled();
		expect(heard).toEqual([`${machineId}:reauthorize`]);
		// Every call now hears it, except disconnecting, which still works.
		const info = await cliRequest(target, "GET", "/api/connector/machine", { credential });
		expect(await info.json()).toMatchObject({ code: "machine-reauthorize" });
		expect((await cliRequest(target, "DELETE", "/api/connector/machine", { credential })).status).toBe(204);
	});
});
