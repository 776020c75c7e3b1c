// packages/agent-link's contract scenarios, with the reference client in Bun and in a Node.js process, against
// this real server: attach and detach, refusals, and a Chat turn running a program of text, a host tool, a
// question answered on the page, a runs report and turn-end, ended by a writer's reset.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import {
	makeRunner,
	RUNTIMES,
	type Runner,
} from "../../../../packages/agent-link/src/client/contract/runtimes";
import { AgentFixture } from "../testing/agent-fixture";

const CONTRACT_MS = 60_000;

for (const runtime of RUNTIMES) {
	describe(`contract scenarios against the server (${runtime})`, () => {
		let runner: Runner;
		let f: AgentFixture | undefined;
		beforeAll(async () => {
			runner = await makeRunner(runtime);
		});
		afterAll(() => runner?.dispose());
		afterEach(async () => {
			runner.stopAll();
			await f?.close();
			f = undefined;
		});

		async function setup() {
			f = await AgentFixture.start();
			const doc = await f.createDocument({ title: "Contract plan" });
			await f.signIn("alice");
			const target = (login = "alice", token?: string) => ({
				url: f!.server.url,
				token: token ?? f!.token(login),
				document: doc.id,
			});
			return { f, doc, target };
		}

		test(
			"connect: attached with the features the client asked for that the server grants, then detach closes 1000",
			async () => {
				const { f, doc, target } = await setup();
				const result = await runner.run("connect", target());
				expect(result).toEqual({
					attached: {
						document: {
							id: doc.id,
							title: "Contract plan",
							repository: "acme/app",
							url: `${f.publicUrl}/d/${doc.id}`,
						},
						features: ["run-stage-deltas"],
					},
					closed: { code: 1000, reason: "detach" },
				});
				await f.until(() => f.ctx.planner.status(doc.id).state === "grace", "the grace period");
			},
			CONTRACT_MS,
		);

		test(
			"refusals: a rejected bearer is an HTTP 401, a held document is planner-attached; no error holds the token",
			async () => {
				const { f, doc, target } = await setup();
				const unauthorized = (await runner.run(
					"connect",
					target("alice", "wrong-token-0123456789abcdef"),
				)) as {
					error: Record<string, unknown>;
				};
				expect(unauthorized.error).toMatchObject({ name: "UpgradeRefused", status: 401, leaksToken: false });
				await f.attach("alice", doc.id);
				await f.signIn("bob");
				const held = (await runner.run("connect", target("bob"))) as { error: Record<string, unknown> };
				expect(held.error).toMatchObject({
					name: "Refused",
					code: "planner-attached",
					message: "alice is connected to this document. A document has one agent connected at a time.",
					retry: false,
					leaksToken: false,
				});
			},
			CONTRACT_MS,
		);

		test(
			"serve: a Chat turn runs text, a host tool, a question answered on the page, runs and turn-end",
			async () => {
				const { f, doc, target } = await setup();
				const served = runner.run("serve", target());
				await f.until(() => f.ctx.planner.status(doc.id).state === "attached", "the client to attach");
				const program = [
					{ text: `Hello from ${runtime}.` },
					{ host: { name: "read_plan", input: { limit: 1 } } },
					{ ask: { method: "confirm", title: "Ship it?", message: "" } },
					{ generateRuns: { cards: 1, stages: 2, nameLength: 8 } },
					{ end: "finished" },
				];
				const sent = await f.ctx.planner.handleMessage({
					documentId: doc.id,
					author: "bob",
					body: `@chopin ${JSON.stringify(program)}`,
				});
				expect(sent).toMatchObject({ status: "sent", turn: true });
				await f.until(async () => (await f.ctx.domain.decisions.list(doc.id)).length === 1, "the question");
				const [decision] = await f.ctx.domain.decisions.list(doc.id);
				await f.ctx.domain.decisions.answer(decision!.id, {
					answer: { kind: "confirm", yes: true },
					by: "bob",
				});
				await f.until(async () => (await f.chat(doc.id)).at(-1)?.status === "done", "the reply");
				const reply = (await f.chat(doc.id)).at(-1)!;
				expect(reply).toMatchObject({ role: "planner", body: `Hello from ${runtime}.` });
				expect(reply.tools.map((t) => [t.name, t.status])).toEqual([["read_plan", "done"]]);
				expect((await f.ctx.domain.runs.list(doc.id)).map((c) => c.id)).toEqual(["run-0"]);

				expect(f.ctx.planner.reset(doc.id)).toBe(true);
				const { log, closed } = (await served) as {
					log: Record<string, unknown>[];
					closed: Record<string, unknown>;
				};
				expect(log[0]).toMatchObject({ event: "start", mode: "planner" });
				const turn = log[1] as { event: string; tools: string[]; steps: unknown[] };
				expect(turn).toMatchObject({
					event: "turn",
					tools: ["read_plan", "read_child", "edit_plan", "open_decisions"],
				});
				expect(turn.steps[0]).toBe("text");
				expect(turn.steps[1]).toMatchObject({
					isError: false,
					output: expect.stringContaining("document: Contract plan"),
				});
				expect(turn.steps[2]).toEqual({
					type: "input-result",
					request: expect.any(String),
					status: "answered",
					value: true,
				});
				expect(turn.steps[3]).toEqual({ frames: 1 });
				expect(turn.steps[4]).toBe("ended finished");
				expect(log.at(-1)).toMatchObject({ event: "destroy" });
				expect(closed).toMatchObject({
					code: 4403,
					reason: "access-revoked",
					refused: {
						code: "access-revoked",
						message:
							"A repository writer reset this document's connection, so alice is no longer connected. Connect again to resume.",
					},
				});
				// The live run the session held shows stopped once the link is gone.
				await f.ctx.planner.settled();
				expect((await f.ctx.domain.runs.list(doc.id))[0]).toMatchObject({ displayStatus: "stopped" });
			},
			CONTRACT_MS,
		);

		test(
			"serve: a turn whose handler throws ends failed, and Chat shows the error",
			async () => {
				const { f, doc, target } = await setup();
				const served = runner.run("serve", target());
				await f.until(() => f.ctx.planner.status(doc.id).state === "attached", "the client to attach");
				await f.ctx.planner.handleMessage({
					documentId: doc.id,
					author: "bob",
					body: `@chopin ${JSON.stringify([{ text: "Trying" }, { throw: "The model is unreachable." }])}`,
				});
				await f.until(async () => (await f.chat(doc.id)).at(-1)?.status === "failed", "the failed reply");
				expect((await f.chat(doc.id)).at(-1)).toMatchObject({
					body: "Trying",
					error: "The model is unreachable.",
				});
				f.ctx.planner.reset(doc.id);
				await served;
			},
			CONTRACT_MS,
		);
	});
}
