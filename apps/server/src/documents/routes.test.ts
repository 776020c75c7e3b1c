import { afterEach, beforeEach, expect, test } from "bun:test";
import { describeStores } from "../store/testing";
import { type ApiServer, createDocument, json, startApiServer } from "../testing/api-server";

describeStores("documents API", (t) => {
	let api: ApiServer;
	beforeEach(async () => {
		api = await startApiServer(t.store);
	});
	afterEach(async () => {
		await api.stop();
	});

	test("GET /api/repositories lists what each person can read, with local mode's configured ones", async () => {
		const alice = await json(await api.call("alice", "GET", "/api/repositories"));
		expect(alice.repositories).toEqual([
			{ fullName: "acme/app", permission: "admin" },
			{ fullName: "other/secret", permission: "admin" },
		]);
		const carol = await json(await api.call("carol", "GET", "/api/repositories"));
		expect(carol.repositories).toEqual([{ fullName: "acme/app", permission: "read" }]);
		expect((await json(await api.call("dave", "GET", "/api/repositories"))).repositories).toEqual([]);
		const signedOut = await api.call(null, "GET", "/api/repositories");
		expect(signedOut.status).toBe(401);
		expect((await json(signedOut)).code).toBe("sign-in-required");
	});

	test("create, list and read a document; writers only create", async () => {
		const created = await api.call("bob", "POST", "/api/documents", {
			repository: "acme/app",
			title: "  Rollout  ",
			source: "# Rollout\n\nStep one.\n",
		});
		expect(created.status).toBe(201);
		const { document, url } = (await created.json()) as {
			document: { id: string; title: string; revision: number };
			url: string;
		};
		expect(document.title).toBe("Rollout");
		expect(document.revision).toBe(0);
		expect(url).toBe(`${api.server.publicUrl}/d/${document.id}`);

		const listed = await json(await api.call("carol", "GET", "/api/documents?repository=acme/app"));
		expect(listed.permission).toBe("read");
		expect((listed.documents as { id: string }[]).map((d) => d.id)).toEqual([document.id]);

		const read = await api.call("carol", "GET", `/api/documents/${document.id}`);
		expect(read.status).toBe(200);
		const body = (await read.json()) as {
			document: { source: string; revision: number; blocks: { kind: string; digest: string }[] };
			permission: string;
			images: string[];
		};
		expect(body.permission).toBe("read");
		expect(body.document.revision).toBe(0);
		expect(body.document.blocks.map((b) => b.kind)).toEqual(["heading", "paragraph"]);
		expect(body.images).toEqual([]);
	});

	test("every refusal of create has its code", async () => {
		const cases: [string | null, unknown, number, string][] = [
			["carol", { repository: "acme/app", title: "X" }, 403, "repository-forbidden"],
			["dave", { repository: "acme/app", title: "X" }, 404, "not-found"],
			["alice", { repository: "not a repo", title: "X" }, 400, "invalid-request"],
			["alice", { repository: "acme/app" }, 400, "invalid-request"],
			["alice", { repository: "acme/app", title: "X", extra: 1 }, 400, "invalid-request"],
			["alice", { repository: "acme/app", title: "   " }, 400, "invalid-title"],
			[
				"alice",
				{ repository: "acme/app", title: "X", source: "x".repeat(1024 * 1024 + 1) },
				413,
				"source-too-large",
			],
			[null, { repository: "acme/app", title: "X" }, 401, "sign-in-required"],
		];
		for (const [who, body, status, code] of cases) {
			const res = await api.call(who as never, "POST", "/api/documents", body);
			expect({ who, status: res.status, code: (await json(res)).code }).toEqual({ who, status, code });
		}
		const notJson = await api.call("alice", "POST", "/api/documents", undefined, {
			"content-type": "text/plain",
		});
		expect(notJson.status).toBe(415);
		const foreign = await api.call(
			"alice",
			"POST",
			"/api/documents",
			{ repository: "acme/app", title: "X" },
			{
				origin: "https://evil.example",
			},
		);
		expect(foreign.status).toBe(403);
		expect((await json(foreign)).code).toBe("origin-forbidden");
		const badQuery = await api.call("alice", "GET", "/api/documents");
		expect(badQuery.status).toBe(400);
		expect((await json(badQuery)).field).toBe("repository");
		expect((await json(await api.call("dave", "GET", "/api/documents?repository=acme/app"))).code).toBe(
			"not-found",
		);
	});

	test("a document nobody may read is answered as one that does not exist", async () => {
		const id = await createDocument(api);
		for (const [who, path] of [
			["dave", `/api/documents/${id}`],
			["alice", "/api/documents/aaaaaaaaaaaa"],
		] as const) {
			const res = await api.call(who, "GET", path);
			expect(res.status).toBe(404);
			const body = await json(res);
			expect(body.code).toBe("document-not-found");
			expect(body.message).not.toContain("acme");
		}
		expect((await api.call(null, "GET", `/api/documents/${id}`)).status).toBe(401);
	});

	test("PUT source saves at the revision read, and refuses a stale one with the current revision", async () => {
		const id = await createDocument(api);
		const saved = await api.call("bob", "PUT", `/api/documents/${id}/source`, {
			source: "# New\n",
			revision: 0,
		});
		expect(saved.status).toBe(200);
		expect(((await saved.json()) as { document: { revision: number } }).document.revision).toBe(1);
		const stale = await api.call("alice", "PUT", `/api/documents/${id}/source`, {
			source: "# Mine\n",
			revision: 0,
		});
		expect(stale.status).toBe(409);
		expect(await json(stale)).toMatchObject({ code: "revision-conflict", revision: 1 });
		const reader = await api.call("carol", "PUT", `/api/documents/${id}/source`, {
			source: "x",
			revision: 1,
		});
		expect(reader.status).toBe(403);
		expect((await json(reader)).code).toBe("repository-forbidden");
		const bad = await api.call("bob", "PUT", `/api/documents/${id}/source`, { source: "x", revision: -1 });
		expect((await json(bad)).code).toBe("invalid-request");
	});

	test("archive, unarchive and delete are for writers; an archived document takes no edits", async () => {
		const id = await createDocument(api);
		expect((await api.call("carol", "POST", `/api/documents/${id}/archive`)).status).toBe(403);
		const archived = await api.call("bob", "POST", `/api/documents/${id}/archive`);
		expect(archived.status).toBe(200);
		expect(((await archived.json()) as { document: { archived: boolean } }).document.archived).toBe(true);
		const edit = await api.call("bob", "PUT", `/api/documents/${id}/source`, { source: "x", revision: 0 });
		expect(edit.status).toBe(409);
		expect((await json(edit)).code).toBe("document-archived");
		const unarchived = await api.call("bob", "POST", `/api/documents/${id}/unarchive`);
		expect(((await unarchived.json()) as { document: { archived: boolean } }).document.archived).toBe(false);

		expect((await api.call("carol", "DELETE", `/api/documents/${id}`)).status).toBe(403);
		expect((await api.call("bob", "DELETE", `/api/documents/${id}`)).status).toBe(204);
		expect((await api.call("alice", "GET", `/api/documents/${id}`)).status).toBe(404);
		expect((await api.call("alice", "DELETE", `/api/documents/${id}`)).status).toBe(404);
		expect(
			(await json(await api.call("alice", "GET", "/api/documents?repository=acme/app"))).documents,
		).toEqual([]);
	});
});
