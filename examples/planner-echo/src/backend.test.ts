// The backend's resumable side, in-process on a ManualClock against the contract suite's scripted
// /api/v1/agent endpoint, where the clock is the test's: the example's resume, its restart rule's timing and
// its token file re-reads are shown at the wire.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Backoff } from "@chopin/agent-link/backoff";
import { ManualClock } from "@chopin/agent-link/clock";
import { ScriptedServer } from "../../../packages/agent-link/src/client/contract/scripted-server";
import { runBackend } from "./backend";

// Fakes of the credential shape, built here so no token-like literal sits in the source.
const TOKEN = `chopin_p_${"t".repeat(43)}`;
const EXPIRED = `chopin_p_${"e".repeat(43)}`;
const PAGE =
	"document: Plan\nsize: 9 bytes, 1 line, 1 block\n\n--- the document's text from line 1, verbatim ---\n# Plan\n";

describe("the backend's life against a scripted endpoint", () => {
	let server: ScriptedServer;
	let dir: string;
	let tokenFile: string;
	let clock: ManualClock;
	let stop: AbortController;
	let lines: string[];
	let running: Promise<number>;

	beforeEach(() => {
		server = new ScriptedServer(TOKEN);
		dir = mkdtempSync(join(tmpdir(), "planner-echo-backend-"));
		tokenFile = join(dir, "token");
		writeFileSync(tokenFile, TOKEN, { mode: 0o600 });
		clock = new ManualClock();
		stop = new AbortController();
		lines = [];
		running = runBackend({
			settings: { url: server.url, document: "doc-1", tokenFile },
			readFile: (path) => readFile(path, "utf8"),
			log: (line) => lines.push(line),
			clock,
			signal: stop.signal,
			// Exact delays, so the test can move the clock by one step.
			backoff: Backoff.schedule([1_000]),
		});
	});

	afterEach(async () => {
		stop.abort();
		await running.catch(() => {});
		server.stop();
		rmSync(dir, { recursive: true, force: true });
	});

	async function logged(pattern: RegExp): Promise<void> {
		for (let i = 0; i < 2000 && !lines.some((l) => pattern.test(l)); i++) await Bun.sleep(i < 50 ? 0 : 5);
		expect(lines).toContainEqual(expect.stringMatching(pattern));
	}

	test("a drop while the room answers keeps the question: it resumes the session and takes the answer", async () => {
		const first = await server.nextConnection();
		await first.attach();
		expect(first.features).toContain("resumable-sessions");
		first.send({ type: "start", session: "s1", mode: "planner" });
		expect(await first.expect("started")).toEqual({ type: "started", session: "s1" });
		first.send({
			type: "turn",
			session: "s1",
			turn: "t1",
			prompt: "@bob: @chopin please ask",
			tools: [{ name: "read_plan" }],
		});
		const call = await first.expect("host-tool-call");
		expect(call).toMatchObject({ toolName: "read_plan", input: "{}" });
		first.send({
			type: "host-tool-result",
			session: "s1",
			turn: "t1",
			toolCallId: call.toolCallId,
			output: PAGE,
		});
		const streamed: string[] = [];
		for (;;) {
			const message = await first.next();
			if (message.type === "input-request") {
				expect(message.input).toMatchObject({ method: "select", choices: ["Apples", "Pears"] });
				break;
			}
			if (message.type === "part" && message.part.type === "text-delta") streamed.push(message.part.delta);
		}
		expect(streamed.join("")).toBe(
			'Echo: @chopin please ask\n\n"Plan" has 1 block; its first heading is "Plan".',
		);
		const request = (first.frames.at(-1) as { message: { request: string } }).message.request;

		first.terminate();
		await logged(/the link dropped \(close 1006/);
		await logged(/attaching again in 1000 ms/);
		await clock.advance(1_000);

		const second = await server.nextConnection();
		await second.attach();
		expect(await second.expect("resume")).toEqual({
			type: "resume",
			sessions: [{ session: "s1", requests: [request] }],
		});
		second.send({ type: "resumed", sessions: [{ session: "s1", requests: [request] }] });
		await logged(/resumed with 1 session\(s\)/);
		second.send({ type: "input-result", request, status: "answered", value: "Pears" });
		expect(await second.expect("input-received")).toEqual({ type: "input-received", request });
		await logged(new RegExp(`question ${request} settled: answered`));

		stop.abort();
		await second.expect("detach");
		expect(await running).toBe(0);
		expect(lines.join("\n")).not.toContain(TOKEN);
	});

	test("the server aborting the turn withdraws its question and ends the turn aborted", async () => {
		const first = await server.nextConnection();
		await first.attach();
		first.send({ type: "start", session: "s1", mode: "planner" });
		await first.expect("started");
		first.send({ type: "turn", session: "s1", turn: "t1", prompt: "@bob: @chopin ask", tools: [] });
		let request = "";
		for (;;) {
			const message = await first.next();
			if (message.type === "input-request") {
				request = message.request;
				break;
			}
		}
		first.send({ type: "abort", session: "s1", turn: "t1" });
		expect(await first.expect("input-cancel")).toEqual({ type: "input-cancel", request });
		expect(await first.expect("turn-end")).toEqual({
			type: "turn-end",
			session: "s1",
			turn: "t1",
			status: "aborted",
		});
	});

	test("restarting then 1012: it attaches again at once, reading the token file again", async () => {
		const first = await server.nextConnection();
		await first.attach();
		first.send({ type: "restarting", reconnectWithinMs: 5_000 });
		first.close(1012, "restarting");
		// No clock step: the restart rule connects again at once.
		const second = await server.nextConnection();
		await second.attach();
		expect(await second.expect("resume")).toEqual({ type: "resume", sessions: [] });
		second.send({ type: "resumed", sessions: [] });
		await logged(/resumed with 0 session\(s\)/);
		expect(lines).toContainEqual(expect.stringContaining("Chopin is restarting"));
		expect(server.upgrades.map((u) => u.status)).toEqual([101, 101]);
	});

	test("a 401 with a token file reads the file again on the backoff and attaches with the new credential", async () => {
		const first = await server.nextConnection();
		await first.attach();
		// The connector renews the credential; a drop then meets the new one only through the file.
		writeFileSync(tokenFile, EXPIRED, { mode: 0o600 });
		first.terminate();
		await logged(/attaching again in 1000 ms/);
		await clock.advance(1_000);
		await logged(/attach failed: upgrade-refused 401/);
		writeFileSync(tokenFile, TOKEN, { mode: 0o600 });
		await clock.advance(1_000);
		const second = await server.nextConnection();
		await second.attach();
		expect(server.upgrades.map((u) => u.status)).toEqual([101, 401, 101]);
		expect(lines.join("\n")).not.toContain(EXPIRED);
		expect(lines.join("\n")).not.toContain(TOKEN);
	});
});
