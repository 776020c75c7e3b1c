// Spec "Handshake", "Versions" and "Features": attach first and nothing before the answer, attached's exact
// shape, features only when asked, the document by id or page URL, and every refusal attach can get.
import { afterEach, describe, expect, test } from "bun:test";
import type { Feature } from "@chopin/agent-link";
import { AgentFixture } from "../testing/agent-fixture";
import { SUPPORTED_FEATURES } from "./planner";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

for (const mode of ["local", "github"] as const) {
	describe(`handshake (${mode})`, () => {
		test("attached names the document (id, title, repository, page URL) and has no features without the header", async () => {
			f = await AgentFixture.start({ mode });
			const doc = await f.createDocument({ title: "Release plan" });
			await f.signIn(f.cast.admin);
			const { attached } = await f.attach(f.cast.admin, doc.id);
			expect(attached).toEqual({
				type: "attached",
				version: 1,
				document: {
					id: doc.id,
					title: "Release plan",
					repository: f.cast.repository,
					url: `${f.publicUrl}/d/${doc.id}`,
				},
			});
		});

		test("with Chopin-Agent-Features, attached lists the requested features this server supports", async () => {
			f = await AgentFixture.start({ mode });
			const doc = await f.createDocument();
			await f.signIn(f.cast.admin);
			for (const features of [
				"run-stage-deltas, resumable-sessions, restart-notice, decision-option-previews",
				"not-a-feature",
				"",
			]) {
				const { socket, attached } = await f.attach(f.cast.admin, doc.id, { features });
				const requested = features.split(",").map((name) => name.trim());
				expect(attached.features).toEqual(
					requested.filter((name) => SUPPORTED_FEATURES.has(name as Feature)),
				);
				socket.send({ type: "detach" });
				await socket.closed;
			}
		});

		test("the document may be named by its page URL on this server, with or without a trailing slash", async () => {
			f = await AgentFixture.start({ mode });
			const doc = await f.createDocument();
			await f.signIn(f.cast.admin);
			for (const reference of [`${f.publicUrl}/d/${doc.id}`, `${f.publicUrl}/d/${doc.id}/?tab=chat#x`]) {
				const socket = await f.connect(f.cast.admin);
				socket.send({
					type: "attach",
					version: 1,
					document: reference,
					checkout: { branch: "plan", head: "abc" },
				});
				expect((await socket.expect("attached")).document.id).toBe(doc.id);
				socket.send({ type: "detach" });
				expect(await socket.closed).toEqual({ code: 1000, reason: "detach" });
			}
		});

		test("document-unavailable (4404) for no such document, another origin's URL, or a deleted one", async () => {
			f = await AgentFixture.start({ mode });
			const doc = await f.createDocument();
			const gone = await f.createDocument({ title: "Gone" });
			await f.ctx.domain.documents.softDelete(gone.id);
			await f.signIn(f.cast.admin);
			for (const document of [
				"nosuchdocument",
				`https://elsewhere.example/d/${doc.id}`,
				`${f.publicUrl}/x/${doc.id}`,
				gone.id,
			]) {
				const socket = await f.connect(f.cast.admin);
				socket.send({ type: "attach", version: 1, document });
				const refused = await socket.expect("refused");
				expect(refused.code).toBe("document-unavailable");
				expect(await socket.closed).toEqual({ code: 4404, reason: "document-unavailable" });
			}
		});

		test("document-archived (4404) for an archived document", async () => {
			f = await AgentFixture.start({ mode });
			const doc = await f.createDocument({ title: "Old plan" });
			await f.ctx.domain.documents.archive(doc.id);
			await f.signIn(f.cast.admin);
			const socket = await f.connect(f.cast.admin);
			socket.send({ type: "attach", version: 1, document: doc.id });
			expect(await socket.expect("refused")).toEqual({
				type: "refused",
				code: "document-archived",
				message: 'The document "Old plan" is archived.',
			});
			expect((await socket.closed).code).toBe(4404);
		});

		test("unsupported-version (4426) for a version other than 1", async () => {
			f = await AgentFixture.start({ mode });
			const doc = await f.createDocument();
			const socket = await f.connect(f.cast.admin);
			socket.send({ type: "attach", version: 2, document: doc.id });
			expect(await socket.expect("refused")).toEqual({
				type: "refused",
				code: "unsupported-version",
				message: "This server speaks chopin.agent.v1 (version 1), not version 2.",
			});
			expect((await socket.closed).code).toBe(4426);
		});

		test("repository-forbidden (4403) for pull access alone, or none", async () => {
			f = await AgentFixture.start({ mode });
			const doc = await f.createDocument();
			for (const login of [f.cast.reader, f.cast.outsider]) {
				await f.signIn(login);
				const socket = await f.connect(login);
				socket.send({ type: "attach", version: 1, document: doc.id });
				expect(await socket.expect("refused")).toEqual({
					type: "refused",
					code: "repository-forbidden",
					message: `${login} cannot push to or administer ${f.cast.repository}, so it cannot be this document's Planner.`,
				});
				expect((await socket.closed).code).toBe(4403);
			}
		});

		test("sign-in-required (4401) without a live browser sign-in since the server started", async () => {
			f = await AgentFixture.start({ mode });
			const doc = await f.createDocument();
			const admin = f.cast.admin;
			const expected = {
				type: "refused" as const,
				code: "sign-in-required" as const,
				message: `${admin} has no live Chopin browser sign-in on this server since it started. Sign in to Chopin at ${f.publicUrl} in a browser as ${admin}, then connect again.`,
			};
			const first = await f.connect(admin);
			first.send({ type: "attach", version: 1, document: doc.id });
			expect(await first.expect("refused")).toEqual(expected);
			expect((await first.closed).code).toBe(4401);

			// Signed in before a restart: the new process has no live sign-in until the browser comes back.
			await f.signIn(admin);
			await f.server.restart();
			const after = await f.connect(admin);
			after.send({ type: "attach", version: 1, document: doc.id });
			expect(await after.expect("refused")).toEqual(expected);
			await f.signIn(admin);
			expect((await f.attach(admin, doc.id)).attached.document.id).toBe(doc.id);
		});
	});
}

describe("handshake order", () => {
	test("a first message other than attach is a protocol error, then 1008", async () => {
		f = await AgentFixture.start();
		const socket = await f.connect("alice");
		socket.send({ type: "detach" });
		expect(await socket.expect("error")).toEqual({
			type: "error",
			code: "protocol",
			message: "The first message must be attach, not detach.",
		});
		expect(await socket.closed).toEqual({ code: 1008, reason: "protocol" });
	});

	test("anything sent before attached or refused answers attach is a protocol error", async () => {
		// GitHub mode, with GitHub holding its answer: the attach is still being checked.
		f = await AgentFixture.start({ mode: "github" });
		const doc = await f.createDocument();
		await f.signIn("octocat");
		const socket = await f.connect("octocat");
		f.gh!.inject({ kind: "hang", pathPrefix: "/api/v3/repos" });
		socket.send({ type: "attach", version: 1, document: doc.id });
		await f.until(() => f!.gh!.held > 0, "the permission check to reach GitHub");
		socket.send({ type: "detach" });
		expect(await socket.expect("error")).toEqual({
			type: "error",
			code: "protocol",
			message: "Send nothing until attached or refused answers attach (got detach).",
		});
		expect((await socket.closed).code).toBe(1008);
		f.gh!.releaseHeld();
		// The attach in flight did not make it the Planner.
		await f.until(() => f!.ctx.planner.connections() === 0, "the link to go");
		expect(f.ctx.planner.status(doc.id).state).toBe("unattached");
	});

	test("a second attach after attached is a protocol error", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		await f.signIn("alice");
		const { socket } = await f.attach("alice", doc.id);
		socket.send({ type: "attach", version: 1, document: doc.id });
		expect(await socket.expect("error")).toEqual({
			type: "error",
			code: "protocol",
			message: "The link is attached already: attach is sent once.",
		});
		expect((await socket.closed).code).toBe(1008);
	});
});
