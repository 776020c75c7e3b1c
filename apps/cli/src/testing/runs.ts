// Builds and investigations end to end for the CLI's tests: a real server, a paired home whose ACP command is the
// scripted agent, the daemon as a real process (optionally behind a TCP proxy, optionally on a terminal), and a
// person starting, resuming and stopping runs through the page's API.
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pageRequest } from "../../../server/src/testing/machines";
import { Secrets } from "../local/secrets";
import { loadCredential, saveCredential } from "../machine/credential";
import { loadMachineConfig, saveMachineConfig } from "../machine/machine-config";
import { type CliProcess, eventually, spawnCli } from "./cli-process";
import { git } from "./git";
import {
	type CliHome,
	type MachineServer,
	makeCliHome,
	pairHome,
	startMachineServer,
} from "./machine-server";
import { TcpProxy } from "./tcp-proxy";

export const ACP_AGENT = join(import.meta.dir, "fixtures", "acp-agent.ts");

export interface RunSetup {
	machines: MachineServer;
	h: CliHome;
	documentId: string;
	machineId: string;
	proxy: TcpProxy | undefined;
	/** The person's checkout's HEAD when the test began. */
	base: string;
	/** ana starts a run from the document's page. */
	start(kind: "build" | "investigation", brief?: string, base?: string): Promise<{ id: string }>;
	/** The run as the page reads it. */
	view(id: string): Promise<Record<string, unknown> & { status: string; displayStatus: string }>;
	/** Its log lines' texts. */
	logLines(id: string): Promise<string[]>;
	act(id: string, action: "stop" | "resume" | "discard"): Promise<Response>;
	/** Waits until the run's stored status is `status`. */
	until(id: string, status: string, limitMs?: number): Promise<Record<string, unknown>>;
	close(): Promise<void>;
}

export async function setUpRuns(options: {
	agent: string[];
	proxy?: boolean;
	/** Planner settings that bear on runs (the sandbox). */
	sandbox?: boolean;
	/** The server's environment on top of the test defaults (shorter link timeouts, say). */
	env?: Record<string, string>;
}): Promise<RunSetup> {
	const machines = await startMachineServer({ env: options.env });
	const h = await makeCliHome();
	const { machineId } = await pairHome(machines, h);
	const proxy = options.proxy
		? await TcpProxy.start({ host: "127.0.0.1", port: Number(new URL(machines.server.url).port) })
		: undefined;
	const config = loadMachineConfig(h.paths)!;
	const server = proxy?.url ?? config.server;
	if (proxy) {
		const deps = { paths: h.paths, platform: "linux" as const, secrets: new Secrets() };
		saveCredential(deps, { ...loadCredential(deps)!, server });
	}
	saveMachineConfig(h.paths, {
		...config,
		server,
		acpCommand: [process.execPath, ACP_AGENT, ...options.agent],
		...(options.sandbox === false && {
			planner: { command: ["true"], env: {}, documents: [], sandbox: { enabled: false, write: [] } },
		}),
	});
	const document = await machines.server.context.domain.documents.create({
		repository: "octo/score",
		title: "Launch plan",
		createdBy: "ana",
	});
	const base = await git(h.checkout, "rev-parse", "HEAD");
	const api = (method: string, path: string, body?: unknown) =>
		pageRequest(machines.target, machines.jar, method, path, body);
	const view = async (id: string) => {
		const res = await api("GET", `/api/builds/${id}`);
		return (
			(await res.json()) as { build: Record<string, unknown> & { status: string; displayStatus: string } }
		).build;
	};
	return {
		machines,
		h,
		documentId: document.id,
		machineId,
		proxy,
		base,
		async start(kind, brief = "Implement the plan.", at = base) {
			const res = await api("POST", `/api/documents/${document.id}/builds`, { kind, brief, base: at });
			const body = (await res.json()) as { build?: { id: string }; message?: string };
			if (!body.build) throw new Error(`the start was refused: ${res.status} ${JSON.stringify(body)}`);
			return body.build;
		},
		view,
		async logLines(id) {
			const res = await api("GET", `/api/builds/${id}/log`);
			return ((await res.json()) as { lines: { text: string }[] }).lines.map((l) => l.text);
		},
		act: (id, action) => api("POST", `/api/builds/${id}/${action}`),
		until: (id, status, limitMs = 30_000) =>
			eventually(
				`run ${id} ${status}`,
				async () => {
					const run = await view(id);
					return run.status === status ? run : undefined;
				},
				limitMs,
			),
		async close() {
			await proxy?.close();
			await machines.server.close();
			// The home holds a machine credential: it does not outlive the test in the temp directory.
			rmSync(h.root, { recursive: true, force: true });
		},
	};
}

/** The daemon as a real process, serving the home. */
export function startDaemon(h: CliHome, env: Record<string, string> = {}): CliProcess {
	return spawnCli(["run"], { ...h.env, ...env });
}

/** The processes whose command line names the scripted agent (or a pattern), with their state. */
export function processesMatching(pattern: RegExp): { pid: number; state: string; cmdline: string }[] {
	const out: { pid: number; state: string; cmdline: string }[] = [];
	for (const entry of readdirSync("/proc")) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim();
			if (!pattern.test(cmdline)) continue;
			const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
			const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]!;
			if (state === "Z" || state === "X") continue;
			out.push({ pid: Number(entry), state, cmdline });
		} catch {
			// Gone meanwhile.
		}
	}
	return out;
}

export { makeCliHome, startMachineServer };

/** The daemon on a terminal (a real pseudo-terminal): what it writes there, and typing into it. */
export interface TerminalDaemon {
	output(): string;
	type(text: string): void;
	waitFor(pattern: RegExp, count?: number): Promise<void>;
	/** Stops it as Ctrl-C does and waits for it. */
	stop(): Promise<number>;
}

export function startDaemonOnTerminal(h: CliHome): TerminalDaemon {
	let text = "";
	const decoder = new TextDecoder();
	const terminal = new Bun.Terminal({
		cols: 200,
		rows: 50,
		data: (_term, data) => {
			text += decoder.decode(data, { stream: true });
		},
	});
	const proc = Bun.spawn([process.execPath, join(import.meta.dir, "..", "main.ts"), "run"], {
		env: h.env,
		terminal,
	});
	return {
		output: () => text,
		type: (input) => terminal.write(input),
		waitFor: (pattern, count = 1) =>
			eventually(`${pattern} on the terminal`, () =>
				(text.match(new RegExp(pattern.source, "g")) ?? []).length >= count ? true : undefined,
			).then(() => {}),
		async stop() {
			proc.kill("SIGINT");
			const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
			const code = await proc.exited;
			clearTimeout(timer);
			terminal.close();
			return code;
		},
	};
}
