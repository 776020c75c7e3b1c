import { afterEach, beforeEach, expect, test } from "bun:test";
import { describeStores } from "../store/testing";
import { type ApiServer, createDocument, json, startApiServer } from "../testing/api-server";

describeStores("Chat API", (t) => {
	let api: ApiServer;
	beforeEach(async () => {
		api = await startApiServer(t.store);
	});
	afterEach(async () => {
		await api.stop();
	});

	test("members post and page through messages", async () => {
		const id = await createDocument(api);
		const posted = await api.call("carol", "POST", `/api/documents/${id}/messages`, {
			body: "Looks good **to me**",
		});
		expect(posted.status).toBe(201);
		const { message } = (await posted.json()) as {
			message: { authorLogin: string; body: string; seq: number };
		};
		expect(message).toMatchObject({
			authorLogin: "carol",
			body: "Looks good **to me**",
			seq: 1,
			role: "person",
		});
		await api.call("bob", "POST", `/api/documents/${id}/messages`, { body: "second" });
		const page = await json(await api.call("carol", "GET", `/api/documents/${id}/messages?limit=1`));
		expect((page.messages as { body: string }[]).map((m) => m.body)).toEqual(["second"]);
		expect(page.more).toBe(true);
		const older = await json(await api.call("carol", "GET", `/api/documents/${id}/messages?before=2`));
		expect((older.messages as { body: string }[]).map((m) => m.body)).toEqual(["Looks good **to me**"]);
	});

	test("an @chopin message without an attached Planner is refused with the spec's words and not kept", async () => {
		const id = await createDocument(api);
		const res = await api.call("bob", "POST", `/api/documents/${id}/messages`, {
			body: "@chopin which store?",
		});
		expect(res.status).toBe(409);
		expect(await json(res)).toEqual({
			code: "planner-not-attached",
			message:
				"Connect a machine to get a reply. Connect an agent client to " +
				`${api.server.publicUrl}/d/${id} over the agent connection from a session in a checkout of acme/app.`,
		});
		expect((await json(await api.call("bob", "GET", `/api/documents/${id}/messages`))).messages).toEqual([]);
		// A mention in code asks nobody.
		const code = await api.call("bob", "POST", `/api/documents/${id}/messages`, {
			body: "`@chopin` is the handle",
		});
		expect(code.status).toBe(201);
	});

	test("refusals have their codes", async () => {
		const id = await createDocument(api);
		const post = (who: "bob" | "dave" | null, body: unknown) =>
			api.call(who, "POST", `/api/documents/${id}/messages`, body);
		const cases: [Response, number, string][] = [
			[await post("bob", { body: "   " }), 400, "message-empty"],
			[await post("bob", { body: "x".repeat(20_001) }), 400, "message-too-long"],
			[await post("bob", { text: "x" }), 400, "invalid-request"],
			[await post("dave", { body: "hi" }), 404, "document-not-found"],
			[await post(null, { body: "hi" }), 401, "sign-in-required"],
			[await api.call("bob", "GET", `/api/documents/${id}/messages?limit=abc`), 400, "invalid-request"],
			[await api.call("bob", "GET", `/api/documents/${id}/messages?limit=500`), 400, "invalid-page"],
		];
		for (const [res, status, code] of cases) {
			expect({ status: res.status, code: (await json(res)).code }).toEqual({ status, code });
		}
		await api.call("bob", "POST", `/api/documents/${id}/archive`);
		const archived = await post("bob", { body: "hi" });
		expect(archived.status).toBe(409);
		expect((await json(archived)).code).toBe("document-archived");
	});
});
