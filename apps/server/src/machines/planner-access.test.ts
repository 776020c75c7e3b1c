import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { plannerCredentialSchema } from "@chopin/agent-link/machine";
import { GitHubAuthorization } from "../auth/github/authorization";
import { LocalAuthorization } from "../auth/local";
import type { Env } from "../config";
import { runnableKinds } from "../store/testing";
import { type GitHubEmulator, startGitHubEmulator } from "../testing/github-emulator";
import { testFixture } from "../testing/github-emulator-test-kit";
import {
	cliRequest,
	helloMachine,
	LOCAL_ENV,
	pageRequest,
	pairLocally,
	pairWithGitHub,
	type Target,
} from "../testing/machines";
import { startTestServer, type TestServer } from "../testing/server";
import { signInLocally, signInWithGitHub } from "../testing/sign-in";
import { PLANNER_CREDENTIAL_TTL_MS } from "./planner-credentials";

const PUBLIC_URL = "http://chopin.test";

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

async function githubServer(store: "sqlite" | "postgres" = "sqlite", env: Env = {}) {
	const server = await startTestServer({ clock, store, env: { PUBLIC_URL, ...gh.env(), ...env } });
	open.push(server);
	const target: Target = { fetch: (req) => server.fetch(req), publicUrl: PUBLIC_URL };
	const { jar } = await signInWithGitHub(target, "hubot");
	const paired = await pairWithGitHub(target, jar, "hubot");
	const document = await server.context.domain.documents.create({
		repository: "score-team/score",
		title: "Plan",
		createdBy: "hubot",
	});
	return { server, target, jar, document, ...paired };
}

const ask = (target: Target, credential: string, document: string) =>
	cliRequest(target, "POST", "/api/connector/planner", { credential, body: { document } });

async function refused(res: Response, status: number, code: string) {
	expect(res.status).toBe(status);
	expect(await res.json()).toMatchObject({ code });
}

const rows = (server: TestServer) =>
	server.context.store.many(
		server.context.store
			.sql`SELECT digest, machine_id, document_id, expires_at FROM planner_credentials ORDER BY created_at`,
	);

for (const kind of runnableKinds()) {
	describe(`POST /api/connector/planner [${kind}]`, () => {
		test("200: a chopin_p_ credential for the document, 15 minutes, its digest stored before it is returned", async () => {
			const { server, target, credential, machineId, document } = await githubServer(kind);
			const res = await ask(target, credential, document.id);
			expect(res.status).toBe(200);
			const issued = plannerCredentialSchema.parse(await res.json());
			expect(issued).toEqual({
				token: issued.token,
				expiresAt: clock.now() + PLANNER_CREDENTIAL_TTL_MS,
				document: { id: document.id, url: `${PUBLIC_URL}/d/${document.id}` },
			});
			const stored = await rows(server);
			expect(stored).toEqual([
				{
					digest: new Bun.CryptoHasher("sha256").update(issued.token).digest("hex"),
					machine_id: machineId,
					document_id: document.id,
					expires_at: issued.expiresAt,
				},
			]);
			// By the document's URL too.
			expect((await ask(target, credential, `${PUBLIC_URL}/d/${document.id}`)).status).toBe(200);
			// The agent endpoint's check: the document, as the machine's owner, with the machine's own authorization.
			const principal = await server.context.machines.verifyPlannerCredential(issued.token);
			expect(principal).toMatchObject({ machineId, login: "hubot", documentId: document.id });
			expect(principal!.authorization).toBeInstanceOf(GitHubAuthorization);
			expect(principal!.authorization.login).toBe("hubot");
			// A restart still accepts it: the check reads the table, and the machine's authorization is restored.
			await server.restart();
			expect(await server.context.machines.verifyPlannerCredential(issued.token)).toMatchObject({
				documentId: document.id,
			});
			expect(server.logs.map((l) => JSON.stringify(l)).join("\n")).not.toContain(issued.token);
		});

		test("expired credentials are refused, then swept; revoking the machine deletes its credentials", async () => {
			const { server, target, jar, credential, machineId, document } = await githubServer(kind);
			const first = plannerCredentialSchema.parse(await (await ask(target, credential, document.id)).json());
			await clock.advance(PLANNER_CREDENTIAL_TTL_MS);
			expect(await server.context.machines.verifyPlannerCredential(first.token)).toBeNull();
			await server.context.machines.settled();
			await server.context.machines.sweep();
			expect(await rows(server)).toEqual([]);

			const second = plannerCredentialSchema.parse(await (await ask(target, credential, document.id)).json());
			expect(await rows(server)).toHaveLength(1);
			expect((await pageRequest(target, jar, "DELETE", `/api/machines/${machineId}`)).status).toBe(204);
			expect(await rows(server)).toEqual([]);
			expect(await server.context.machines.verifyPlannerCredential(second.token)).toBeNull();
			await refused(await ask(target, credential, document.id), 401, "machine-revoked");
		});

		test("credentials go with the document, and when its Planner stops on the machine", async () => {
			const { server, target, credential, document } = await githubServer(kind);
			const other = await server.context.domain.documents.create({
				repository: "score-team/score",
				title: "Other",
				createdBy: "hubot",
			});
			await ask(target, credential, document.id);
			await ask(target, credential, other.id);
			expect(await rows(server)).toHaveLength(2);
			await server.context.domain.documents.softDelete(document.id);
			await server.context.machines.settled();
			expect((await rows(server)).map((r) => r.document_id)).toEqual([other.id]);

			const { client } = await helloMachine(server.url, credential, ["score-team/score"]);
			sockets.push(client);
			const changed = new Promise<void>((resolve) => {
				const off = server.context.machines.onChange(() => {
					off();
					resolve();
				});
			});
			client.send({ type: "planner-event", document: other.id, event: "stopped" });
			await changed;
			expect(await rows(server)).toEqual([]);
		});
	});
}

describe("POST /api/connector/planner: the other answers", () => {
	test("404 not-found, 409 document-archived, 403 repository-forbidden (with the machine's own authorization)", async () => {
		const { server, target, credential, document } = await githubServer();
		await refused(await ask(target, credential, "aaaaaaaaaaaa"), 404, "not-found");
		await refused(
			await ask(target, credential, "https://elsewhere.example/d/aaaaaaaaaaaa"),
			404,
			"not-found",
		);
		const archived = await server.context.domain.documents.create({
			repository: "score-team/score",
			title: "Old",
			createdBy: "hubot",
		});
		await server.context.domain.documents.archive(archived.id);
		await refused(await ask(target, credential, archived.id), 409, "document-archived");
		gh.setPermission("score-team/score", "hubot", "read");
		const res = await ask(target, credential, document.id);
		await refused(res, 403, "repository-forbidden");
	});

	test("401 machine-reauthorize once GitHub refuses the machine's authorization for good", async () => {
		const { target, credential, document } = await githubServer();
		gh.revokeAuthorization("hubot");
		await refused(await ask(target, credential, document.id), 401, "machine-reauthorize");
		await refused(await ask(target, credential, document.id), 401, "machine-reauthorize");
	});

	test("404 without HARNESS=remote or with AGENT off, before the credential is even read", async () => {
		for (const env of [{ HARNESS: "atomic" }, { AGENT: "off" }]) {
			const { target, credential, document } = await githubServer("sqlite", env);
			await refused(await ask(target, credential, document.id), 404, "not-found");
			await refused(await ask(target, "nothing", document.id), 404, "not-found");
		}
	});

	test("local mode: 404, unless LOCAL_PLANNER_CREDENTIALS=on", async () => {
		for (const flag of ["off", "on"]) {
			const server = await startTestServer({
				clock,
				env: { ...LOCAL_ENV, LOCAL_PLANNER_CREDENTIALS: flag },
			});
			open.push(server);
			const target: Target = {
				fetch: (req) => server.fetch(req),
				publicUrl: server.context.config.publicUrl,
			};
			const { jar } = await signInLocally(target, "ana");
			const { credential } = await pairLocally(target, jar);
			const document = await server.context.domain.documents.create({
				repository: "octo/score",
				title: "Plan",
				createdBy: "ana",
			});
			const res = await ask(target, credential, document.id);
			if (flag === "off") {
				await refused(res, 404, "not-found");
				continue;
			}
			const issued = plannerCredentialSchema.parse(await res.json());
			const principal = await server.context.machines.verifyPlannerCredential(issued.token);
			expect(principal?.authorization).toBeInstanceOf(LocalAuthorization);
			expect(principal?.login).toBe("ana");
			// A local authorization holds no GitHub token.
			const gitHubToken = await cliRequest(target, "GET", "/api/connector/github-token", { credential });
			expect(gitHubToken.status).toBe(204);
		}
	});
});
