// Spec "Endpoint and authentication": every HTTP refusal of the upgrade, in the spec's order, in local and
// GitHub mode (against the emulator), and the pluggable bearer resolvers a machine's credential will use.
import { afterEach, describe, expect, test } from "bun:test";
import { LocalAuthorization } from "../auth/local";
import { AgentFixture } from "../testing/agent-fixture";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const body = (answer: { body: string }) => JSON.parse(answer.body);

describe("the route exists only with AGENT on and HARNESS=remote", () => {
	for (const env of [{ AGENT: "off" }, { HARNESS: "pi" }, { AGENT: "off", HARNESS: "atomic" }]) {
		test(`404 for every request with ${JSON.stringify(env)}, upgrade or not, before anything else`, async () => {
			f = await AgentFixture.start({ env });
			// A request that would fail every later check still gets 404 first.
			const upgrade = await f.open({ protocols: null, origin: "https://evil.example", token: null });
			expect(upgrade.status).toBe(404);
			for (const method of ["GET", "POST", "PUT", "DELETE"]) {
				const res = await f.server.fetch(new Request(`${f.publicUrl}/api/v1/agent`, { method }));
				expect(res.status).toBe(404);
			}
		});
	}
});

const matrix = [
	["local", "sqlite"],
	["github", "sqlite"],
	["local", "postgres"],
	["github", "postgres"],
] as const;

for (const [mode, store] of matrix) {
	describe(`upgrade refusals (${mode}, ${store})`, () => {
		test("426 with the subprotocols the server speaks when chopin.agent.v1 is not offered", async () => {
			f = await AgentFixture.start({ mode, store });
			for (const protocols of [null, "chopin.agent.v2", "chopin.agent.v1x, other"]) {
				const answer = await f.open({ login: f.cast.admin, protocols });
				expect(answer.status).toBe(426);
				expect(body(answer)).toEqual({ code: "subprotocol-required", supported: ["chopin.agent.v1"] });
			}
		});

		test("101 answering exactly chopin.agent.v1, also when it is offered after others", async () => {
			f = await AgentFixture.start({ mode, store });
			for (const protocols of [
				"chopin.agent.v1",
				"chopin.agent.v2, chopin.agent.v1",
				"x,chopin.agent.v1,y",
			]) {
				const answer = await f.open({ login: f.cast.admin, protocols });
				expect(answer.status).toBe(101);
				expect(answer.headers.get("sec-websocket-protocol")).toBe("chopin.agent.v1");
			}
		});

		test("403 for a foreign Origin; no Origin or the server's own passes", async () => {
			f = await AgentFixture.start({ mode, store });
			const foreign = await f.open({ login: f.cast.admin, origin: "https://evil.example" });
			expect(foreign.status).toBe(403);
			expect(body(foreign).code).toBe("origin-forbidden");
			expect((await f.open({ login: f.cast.admin, origin: f.publicUrl })).status).toBe(101);
			expect((await f.open({ login: f.cast.admin })).status).toBe(101);
		});

		test("401 for a missing, malformed or rejected bearer, and an unknown Planner credential", async () => {
			f = await AgentFixture.start({ mode, store });
			expect((await f.open({ token: null })).status).toBe(401);
			expect((await f.open({ headers: { Authorization: "Basic YWxpY2U6cHc=" } })).status).toBe(401);
			expect((await f.open({ token: "not-a-real-token-0123456789" })).status).toBe(401);
			const planner = await f.open({ token: `chopin_p_${"A".repeat(43)}` });
			expect(planner.status).toBe(401);
			expect(body(planner).code).toBe("unauthorized");
		});

		test("403 when the account fails instance admission", async () => {
			f = await AgentFixture.start({ mode, store, env: { ADMIT: "somebody-else" } });
			const answer = await f.open({ login: f.cast.admin });
			expect(answer.status).toBe(403);
			expect(body(answer).code).toBe("not-admitted");
		});

		test("the checks run in the spec's order: 426, then 403 Origin, then 401, then 403 admission", async () => {
			f = await AgentFixture.start({ mode, store, env: { ADMIT: "somebody-else" } });
			const origin = "https://evil.example";
			expect((await f.open({ protocols: null, origin, token: null })).status).toBe(426);
			expect((await f.open({ origin, token: null })).status).toBe(403);
			expect(body(await f.open({ origin: f.publicUrl, token: null })).code).toBe("unauthorized");
			expect(body(await f.open({ login: f.cast.admin })).code).toBe("not-admitted");
		});

		test("500 for any other failure checking the bearer or admission", async () => {
			f = await AgentFixture.start({ mode, store });
			f.ctx.planner.resolvers.add({
				name: "broken",
				resolve: async (token) => {
					if (token === "broken-resolver-token-0001") throw new Error("the machines table is gone");
					if (token !== "odd-principal-token-00001") return null;
					// An authorization the mode's identity cannot check: admission fails unexpectedly.
					const odd = {
						login: "x",
						kind: mode === "local" ? "github" : "local",
						accessToken: async () => "t",
					};
					return { kind: "account", login: "x", authorization: odd as never };
				},
			});
			expect((await f.open({ token: "broken-resolver-token-0001" })).status).toBe(500);
			if (mode === "local") expect((await f.open({ token: "odd-principal-token-00001" })).status).toBe(500);
			expect(f.server.logs.some((l) => l.msg === "agent credential check failed")).toBe(true);
		});
	});
}

describe("upgrade refusals (github only)", () => {
	test("503 when GitHub fails or rate limits while checking the bearer, with Retry-After when it said", async () => {
		f = await AgentFixture.start({ mode: "github" });
		f.gh!.inject({ kind: "status", status: 502, pathPrefix: "/api/v3/user" });
		const down = await f.open({ login: "hubot" });
		expect(down.status).toBe(503);
		expect(body(down).code).toBe("github-unavailable");
		f.gh!.inject({ kind: "rate-limit", style: "secondary", seconds: 30, pathPrefix: "/api/v3/user" });
		const limited = await f.open({ login: "maintainer" });
		expect(limited.status).toBe(503);
		expect(limited.headers.get("retry-after")).toBe("30");
		// GitHub back: the same tokens are accepted.
		expect((await f.open({ login: "hubot" })).status).toBe(101);
	});

	test("503 when GitHub fails during the admission check", async () => {
		f = await AgentFixture.start({ mode: "github", env: { ADMIT: "org:score-team" } });
		f.gh!.inject({ kind: "status", status: 503, pathPrefix: "/api/v3/user/orgs" });
		expect((await f.open({ login: "hubot" })).status).toBe(503);
		expect((await f.open({ login: "hubot" })).status).toBe(101);
		expect((await f.open({ login: "outsider" })).status).toBe(403);
	});
});

describe("bearer resolvers: the seam a paired machine's chopin_p_ credential uses", () => {
	const credential = `chopin_p_${"m".repeat(43)}`;

	test("a machine principal attaches only its document, as its owner, with no browser sign-in; revoking it closes with 4403", async () => {
		f = await AgentFixture.start();
		const mine = await f.createDocument({ title: "Mine" });
		const other = await f.createDocument({ title: "Other" });
		const removeResolver = f.ctx.planner.resolvers.add({
			name: "test-machines",
			resolve: async (token) =>
				token === credential
					? {
							kind: "machine",
							login: "alice",
							authorization: new LocalAuthorization("alice"),
							documentId: mine.id,
							machineId: "machine-1",
						}
					: null,
		});
		const wrong = (await f.open({ token: credential })).socket!;
		wrong.send({ type: "attach", version: 1, document: other.id });
		expect(await wrong.expect("refused")).toEqual({
			type: "refused",
			code: "repository-forbidden",
			message: "This Planner credential was issued for another document.",
		});
		expect((await wrong.closed).code).toBe(4403);

		const right = (await f.open({ token: credential })).socket!;
		right.send({ type: "attach", version: 1, document: mine.id });
		expect((await right.expect("attached")).document.id).toBe(mine.id);
		expect(f.ctx.planner.status(mine.id)).toEqual({ state: "attached", login: "alice" });

		// A browser sign-in of the same account ending does not release a machine's link.
		await f.signIn("alice");
		await f.signOut("alice");
		expect(f.ctx.planner.status(mine.id).state).toBe("attached");

		expect(
			f.ctx.planner.closeLinks(
				{ machineId: "machine-1" },
				{ code: "access-revoked", message: "The machine was disconnected." },
			),
		).toBe(1);
		expect(await right.expect("refused")).toMatchObject({ code: "access-revoked" });
		expect((await right.closed).code).toBe(4403);
		expect(f.ctx.planner.status(mine.id).state).toBe("unattached");

		// Without the resolver the credential is unknown again: 401.
		removeResolver();
		expect((await f.open({ token: credential })).status).toBe(401);
	});
});
