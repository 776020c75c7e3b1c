import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { ManualClock, systemClock } from "@chopin/agent-link/clock";
import { makeTempDir } from "../testing/context";
import { type AcpSession, chopinMcpServer, startAcpSession, startLimit } from "./acp-client";
import { declined } from "./permissions";

const AGENT = join(import.meta.dir, "..", "testing", "fixtures", "acp-agent.ts");
const MCP = {
	url: "http://127.0.0.1:9/mcp",
	token: `chopin_r_${"T".repeat(43)}`,
	bridge: ["/opt/chopin/bin/chopin"],
	server: "http://127.0.0.1:9",
};

const procs: Bun.Subprocess[] = [];
const dirs: string[] = [];
const done = new AbortController();
const sessions: AcpSession[] = [];
afterAll(() => done.abort());
afterEach(() => {
	for (const s of sessions.splice(0)) s.close();
	for (const p of procs.splice(0)) p.kill("SIGKILL");
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The scripted agent as a real child process, and a session with it. */
async function start(args: string[], onPermission = declined) {
	const proc = Bun.spawn([process.execPath, AGENT, ...args], {
		stdin: "pipe",
		stdout: "pipe",
		stderr: "inherit",
	});
	procs.push(proc);
	const updates: SessionUpdate[] = [];
	const cwd = makeTempDir("chopin-acp-");
	dirs.push(cwd);
	const session = await startAcpSession({
		streams: {
			stdin: {
				write: (chunk) => {
					proc.stdin.write(chunk);
					proc.stdin.flush();
				},
				end: () => proc.stdin.end(),
			},
			stdout: proc.stdout,
		},
		cwd,
		mcp: MCP,
		version: "0.1.0",
		startLimit: startLimit(systemClock(), { signal: done.signal }),
		onUpdate: (update) => {
			updates.push(update);
		},
		onPermission: async (request) => onPermission(request),
	});
	sessions.push(session);
	return { proc, session, updates, cwd };
}

const texts = (updates: SessionUpdate[]) =>
	updates.flatMap((u) =>
		u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text.trimEnd()] : [],
	);

describe("an ACP agent driven through the SDK", () => {
	test("HTTP MCP when the agent advertises it: the credential rides in a header, never in arguments", async () => {
		const { session, updates, cwd } = await start(["hello"]);
		expect(session.mcpTransport).toBe("http");
		expect(await session.prompt("hi")).toBe("end_turn");
		expect(texts(updates)).toEqual([`hello from ${cwd} over http`]);
		expect(updates.map((u) => u.sessionUpdate)).toEqual(["agent_message_chunk", "plan"]);
		expect(chopinMcpServer(MCP, true)).toEqual({
			type: "http",
			name: "chopin",
			url: MCP.url,
			headers: [{ name: "Authorization", value: `Bearer ${MCP.token}` }],
		});
	});

	test("the stdio bridge otherwise: this binary run as `bridge`, the credential in its environment", async () => {
		const { session, updates } = await start(["hello", "--no-http-mcp"]);
		expect(session.mcpTransport).toBe("stdio");
		expect(await session.prompt("hi")).toBe("end_turn");
		expect(texts(updates)[0]).toEndWith("over stdio");
		const entry = chopinMcpServer({ ...MCP, bridge: ["/usr/bin/bun", "/src/main.ts"] }, false);
		expect(entry).toEqual({
			name: "chopin",
			command: "/usr/bin/bun",
			args: ["/src/main.ts", "bridge"],
			env: [
				{ name: "CHOPIN_URL", value: MCP.server },
				{ name: "CHOPIN_RUN_TOKEN", value: MCP.token },
			],
		});
		expect(JSON.stringify((entry as { args: string[] }).args)).not.toContain("chopin_r_");
	});

	test("a permission request goes to the run's policy: declined picks the agent's reject option", async () => {
		const { session, updates } = await start(["permission"]);
		expect(await session.prompt("go")).toBe("end_turn");
		expect(texts(updates)).toEqual(["permission: deny"]);
	});

	test("cancel ends the turn as cancelled", async () => {
		const { session, updates } = await start(["stall"]);
		const done = session.prompt("go");
		while (texts(updates).length === 0) await Bun.sleep(10);
		await session.cancel();
		expect(await done).toBe("cancelled");
	});

	test("an agent that exits during the prompt rejects it and closes the session", async () => {
		const { proc, session, updates } = await start(["stall"]);
		const done = session.prompt("go");
		while (texts(updates).length === 0) await Bun.sleep(10);
		proc.kill("SIGKILL");
		await expect(done).rejects.toThrow();
		await session.closed;
	});

	test("an agent that never answers initialize fails the start within the bound, time paused not counting", async () => {
		const proc = Bun.spawn(["sleep", "30"], { stdin: "pipe", stdout: "pipe" });
		procs.push(proc);
		const clock = new ManualClock();
		let paused = false;
		const start = startAcpSession({
			streams: { stdin: { write: () => {}, end: () => {} }, stdout: proc.stdout },
			cwd: "/tmp",
			mcp: MCP,
			version: "0.1.0",
			startLimit: startLimit(clock, {
				ms: 3000,
				counts: () => !paused,
				signal: new AbortController().signal,
			}),
			onUpdate: () => {},
			onPermission: async (r) => declined(r),
		});
		let failed = false;
		start.catch(() => {
			failed = true;
		});
		await clock.advance(2000);
		paused = true;
		await clock.advance(60_000);
		expect(failed).toBe(false);
		paused = false;
		await clock.advance(1000);
		await expect(start).rejects.toThrow("did not answer within 3 s");
	});
});
