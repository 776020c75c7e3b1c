// The context built from the real process: the only place that reads process.env, the platform and the paths for a
// command. The status context is the part `chopin status` needs (status-main.ts builds only that); the full context
// adds what other commands use (stdin, spawning, WebSockets, the host name).
//
// Start-up time matters (docs/install.md § Start-up time): nothing here loads a Node built-in; the parts few commands
// use are getters or load their module on first use.
import { systemClock } from "@chopin/agent-link/clock";
import type { execa } from "execa";
import { createLog, logLevelFromEnv } from "../local/log";
import { pathsFromEnvironment, toPlatform } from "../local/paths";
import { Secrets } from "../local/secrets";
import type { StatusContext } from "../status/status-report";
import type { CliContext } from "./context";
import { processWriter } from "./process-writer";
import { CLI_VERSION, detectInstallMethod, selfCommand } from "./version";

export type ProcessStatusContext = StatusContext & Pick<CliContext, "env" | "cwd"> & { closeLog(): void };

export function statusProcessContext(signal: AbortSignal): ProcessStatusContext {
	const platform = toPlatform(process.platform);
	// Not copied: chopin never changes its own environment, and copying it costs every start ~0.3 ms.
	const env = process.env;
	const cwd = process.cwd();
	const { home, paths } = pathsFromEnvironment(platform, env, cwd);
	const clock = systemClock();
	const secrets = new Secrets();
	const stdout = processWriter({ fd: 1, stream: () => process.stdout });
	const stderr = processWriter({ fd: 2, stream: () => process.stderr });
	const log = createLog({
		file: paths.logFile,
		secrets,
		clock,
		level: logLevelFromEnv(env.CHOPIN_LOG_LEVEL),
		stderr,
	});
	// Inside a compiled binary argv is [bun, /$bunfs/root/chopin, ...] and Bun.main the embedded entry.
	const facts = { execPath: process.execPath, main: Bun.main, platform, home };
	return {
		stdout,
		stderr,
		env,
		cwd,
		platform,
		arch: process.arch,
		home,
		clock,
		paths,
		fetch: globalThis.fetch,
		version: CLI_VERSION,
		execPath: process.execPath,
		// A getter: asked by the commands that start chopin again, not by every start.
		get selfCommand() {
			return selfCommand(facts);
		},
		installMethod: detectInstallMethod(facts),
		log: log.logger,
		secrets,
		signal,
		closeLog: log.close,
	};
}

export function processContext(signal: AbortSignal): CliContext & { closeLog(): void } {
	const base = statusProcessContext(signal);
	const more: Omit<CliContext, keyof ProcessStatusContext> = {
		// Node's and Bun's process.execve; Windows has no exec that keeps the process. A getter: none either for a
		// chopin the npm shim started, whose relay an execve would cut (launcher-link.ts).
		get reexec(): CliContext["reexec"] {
			if (process.platform === "win32" || !process.execve) return undefined;
			const { joinedLauncher } = require("./launcher-link") as typeof import("./launcher-link");
			if (joinedLauncher()) return undefined;
			return (argv: readonly string[]): never => {
				base.closeLog();
				process.execve?.(argv[0]!, [...argv], process.env as Record<string, string>);
				throw new Error("execve returned");
			};
		},
		// Getters: process.stdin is a Node stream that costs ~5 ms to build, and few commands read it.
		stdin: {
			get stream() {
				return process.stdin;
			},
			get isTTY() {
				return Boolean(process.stdin.isTTY);
			},
		},
		// Loaded on first use: most commands never spawn, and execa takes ~10 ms to load.
		get spawn(): typeof execa {
			return (require("execa") as typeof import("execa")).execa;
		},
		// ws reads a refused upgrade's status and JSON body, which the platform WebSocket cannot; loaded
		// by the commands that connect.
		openWebSocket: (url, protocols, options) => {
			const { WebSocket } = require("ws") as typeof import("ws");
			return new WebSocket(url, protocols, options);
		},
		// node:os on first use: only the daemon and connect ask for the host name or the network.
		get hostname() {
			return nodeOs().hostname();
		},
		networkInterfaces: () => nodeOs().networkInterfaces(),
		// node:os on first use: only the service commands ask who the user is.
		get user() {
			const name = nodeOs().userInfo().username;
			const domain = process.env.USERDOMAIN;
			return {
				uid: process.getuid?.() ?? -1,
				name: process.platform === "win32" && domain ? `${domain}\\${name}` : name,
			};
		},
	};
	// Property by property, so that the getters stay getters.
	return Object.defineProperties(base, Object.getOwnPropertyDescriptors(more)) as CliContext & {
		closeLog(): void;
	};
}

function nodeOs(): typeof import("node:os") {
	return require("node:os") as typeof import("node:os");
}
