// planner-echo against the real server (in-process, AUTH_MODE=local, AGENT on, HARNESS=remote) as a real
// child process: it answers @chopin messages posted through the JSON API, asks a question that is answered
// through the API, exits 0 on SIGTERM, reads its token file again after a dropped link, and exits 1 on a
// final refusal. Its output never holds a token.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentFixture } from "../../../apps/server/src/testing/agent-fixture";
import type { CookieJar } from "../../../apps/server/src/testing/sign-in";
import { EchoProcess } from "./testing/echo-process";

const TIMEOUT = 60_000;

interface ChatMessage {
	role: string;
	authorLogin: string | null;
	body: string;
	status: string;
}
interface Decision {
	id: string;
	status: string;
	question: { method: string; title?: string };
}

describe("planner-echo, a real backend process against a real server", () => {
	let f: AgentFixture;
	let dir: string;
	let tokenFile: string;
	let echo: EchoProcess | undefined;
	let documentId: string;
	const jars: Record<string, CookieJar> = {};

	beforeEach(async () => {
		f = await AgentFixture.start({ mode: "local", env: { AGENT: "on", HARNESS: "remote" } });
		dir = mkdtempSync(join(tmpdir(), "planner-echo-"));
		tokenFile = join(dir, "planner-token");
		writeToken(f.token("alice"));
		for (const login of ["alice", "bob"]) jars[login] = await f.signIn(login);
		documentId = (
			await f.createDocument({ title: "Launch plan", source: "# Launch plan\n\nShip on Friday.\n" })
		).id;
	});

	afterEach(async () => {
		await echo?.kill();
		echo = undefined;
		await f.close();
		rmSync(dir, { recursive: true, force: true });
	});

	function writeToken(token: string): void {
		writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
	}

	function start(): EchoProcess {
		echo = new EchoProcess({
			CHOPIN_URL: f.server.url,
			CHOPIN_DOCUMENT: documentId,
			CHOPIN_PLANNER_TOKEN_FILE: tokenFile,
		});
		return echo;
	}

	/** A request over real HTTP as bob's browser would send it (our Origin, his cookies). */
	async function api(method: string, path: string, body?: unknown, login = "bob"): Promise<Response> {
		return fetch(new URL(path, f.server.url), {
			method,
			headers: {
				origin: f.publicUrl,
				cookie: jars[login]!.header(),
				...(body === undefined ? {} : { "content-type": "application/json" }),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
	}

	async function post(body: string): Promise<void> {
		const res = await api("POST", `/api/documents/${documentId}/messages`, { body });
		expect({ status: res.status, body: res.status === 201 ? "" : await res.text() }).toEqual({
			status: 201,
			body: "",
		});
	}

	async function messages(): Promise<ChatMessage[]> {
		const res = await api("GET", `/api/documents/${documentId}/messages`);
		return ((await res.json()) as { messages: ChatMessage[] }).messages;
	}

	/** The Planner's finished reply whose body contains text, read over the API. */
	async function reply(text: string): Promise<ChatMessage> {
		let found: ChatMessage | undefined;
		await f.until(
			async () => {
				found = (await messages()).find(
					(m) => m.role === "planner" && m.status === "done" && m.body.includes(text),
				);
				return found !== undefined;
			},
			`a finished reply containing ${JSON.stringify(text)}`,
		);
		return found!;
	}

	async function openDecision(): Promise<Decision> {
		let found: Decision | undefined;
		await f.until(async () => {
			const res = await api("GET", `/api/documents/${documentId}/decisions`);
			const { decisions } = (await res.json()) as { decisions: Decision[] };
			found = decisions.find((d) => d.status === "open");
			return found !== undefined;
		}, "an open decision");
		return found!;
	}

	function expectNoToken(process: EchoProcess): void {
		for (const login of ["alice", "bob"]) expect(process.output).not.toContain(f.token(login));
	}

	test(
		"an @chopin message gets the streamed echo with a summary of the document read through read_plan",
		async () => {
			const p = start();
			await p.waitFor(/attached to "Launch plan" \(acme\/app\) as its Planner/);
			await post("@chopin hello");
			const answer = await reply("Echo: @chopin hello");
			expect(answer.body).toBe(
				'Echo: @chopin hello\n\n"Launch plan" has 2 blocks; its first heading is "Launch plan".',
			);
			// The read is a real host call, shown in the reply's Work details.
			expect((answer as unknown as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual([
				"read_plan",
			]);
			await p.waitFor(/turn \S+ finished/);
			expect(p.lines.some((l) => l.includes('"@chopin hello"'))).toBe(true);
			expectNoToken(p);
		},
		TIMEOUT,
	);

	test(
		"a message with `ask` opens a Decision; answering it through the API gets the follow-up",
		async () => {
			const p = start();
			await p.waitFor(/attached to/);
			await post("@chopin ask me which fruit");
			const decision = await openDecision();
			expect(decision.question).toEqual({
				method: "select",
				title: "Planner echo asks: which fruit?",
				choices: ["Apples", "Pears"],
			} as Decision["question"]);
			await p.waitFor(/question \S+ asked in turn/);

			const res = await api("POST", `/api/decisions/${decision.id}/answer`, {
				answer: { kind: "choice", choice: "Pears" },
			});
			expect(res.status).toBe(200);
			const answer = await reply("You chose Pears.");
			expect(answer.body).toStartWith("Echo: @chopin ask me which fruit\n\n");
			expect(answer.body).toEndWith("\n\nYou chose Pears.");
			await p.waitFor(/question \S+ settled: answered/);
			expectNoToken(p);
		},
		TIMEOUT,
	);

	test(
		"SIGTERM: it detaches and exits 0",
		async () => {
			const p = start();
			await p.waitFor(/attached to/);
			expect(f.ctx.planner.status(documentId)).toMatchObject({ state: "attached" });
			p.signal("SIGTERM");
			expect(await p.exited).toBe(0);
			expect(p.output).toContain("stopped: detached from the document");
			// The server saw a detach (1000), not a dropped socket.
			await f.until(
				() => f.server.logs.some((l) => l.msg === "agent link closed" && l.code === 1000),
				"the link closed by detach",
			);
		},
		TIMEOUT,
	);

	test(
		"after a dropped link it reads the token file again and reattaches with the new credential",
		async () => {
			const p = start();
			await p.waitFor(/attached to/);
			await post("@chopin hello");
			await reply("Echo: @chopin hello");

			// Until the test is ready, the file holds a credential the server refuses (401): the
			// backend must keep reading the file on its backoff rather than give up or reuse alice's.
			writeToken("not-a-valid-token-0123456789");
			await f.server.restart();
			await p.waitFor(/the link dropped \(close 1012/);
			await p.waitFor(/attach failed: upgrade-refused 401/);
			// A restart forgets browser sign-ins until the browser comes back with its cookie.
			expect((await api("GET", "/api/me")).status).toBe(200);
			writeToken(f.token("bob"));

			await p.waitFor(/attached to "Launch plan"/, 2);
			await f.until(
				() => f.server.logs.some((l) => l.msg === "agent attached" && l.login === "bob"),
				"bob's attach",
			);
			await post("@chopin hello again");
			await reply("Echo: @chopin hello again");
			expectNoToken(p);
			expect(p.output).not.toContain("not-a-valid-token-0123456789");
		},
		TIMEOUT,
	);

	test(
		"a final refusal (a writer resets the Planner: access-revoked) ends it with exit 1 and one line",
		async () => {
			const p = start();
			await p.waitFor(/attached to/);
			const res = await api("POST", `/api/documents/${documentId}/planner/reset`, {}, "alice");
			expect(res.status).toBe(200);
			expect(await p.exited).toBe(1);
			expect(p.lines.at(-1)).toStartWith("planner-echo: refused access-revoked: ");
		},
		TIMEOUT,
	);

	test(
		"refused planner-attached (another link holds the document) is retried on the backoff until it is free",
		async () => {
			const holder = await f.attach("alice", documentId);
			writeToken(f.token("bob"));
			const p = start();
			await p.waitFor(/attach failed: refused planner-attached: alice is connected/);
			holder.socket.send({ type: "detach" });
			await holder.socket.closed;
			// alice keeps the document for her grace period; once it is over, bob's backend gets it.
			await f.until(() => f.ctx.planner.status(documentId).state === "grace", "alice's grace period");
			await f.clock.advance(10 * 60_000);
			await p.waitFor(/attached to "Launch plan"/);
			expect(f.ctx.planner.status(documentId)).toMatchObject({ state: "attached", login: "bob" });
		},
		TIMEOUT,
	);

	test(
		"SIGINT (Ctrl-C) while it waits to attach again exits 0 at once",
		async () => {
			writeToken("not-a-valid-token-0123456789");
			const p = start();
			await p.waitFor(/attach failed: upgrade-refused 401/);
			await p.waitFor(/attaching again in \d+ ms/);
			p.signal("SIGINT");
			expect(await p.exited).toBe(0);
			expect(p.output).not.toContain("not-a-valid-token-0123456789");
		},
		TIMEOUT,
	);

	test(
		"a token file that is gone (the machine was revoked) ends it with exit 1 and one line",
		async () => {
			writeToken("not-a-valid-token-0123456789");
			const p = start();
			await p.waitFor(/attach failed: upgrade-refused 401/);
			rmSync(tokenFile);
			expect(await p.exited).toBe(1);
			expect(p.lines.at(-1)).toStartWith("planner-echo: credential-gone: ");
		},
		TIMEOUT,
	);

	test(
		"a missing environment variable exits 2 with one line naming it",
		async () => {
			const p = new EchoProcess({ CHOPIN_URL: f.server.url, CHOPIN_PLANNER_TOKEN_FILE: tokenFile });
			echo = p;
			expect(await p.exited).toBe(2);
			expect(p.lines).toEqual([
				expect.stringMatching(/^planner-echo: env-invalid: CHOPIN_DOCUMENT is missing/),
			]);
		},
		TIMEOUT,
	);
});
