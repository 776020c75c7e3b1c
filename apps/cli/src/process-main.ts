// The real process's run, behind main.ts: the only place that reads the real process, builds the context, and turns an error into an exit code.
//
// Start-up time matters (every command pays it; see docs/install.md § Start-up time), so only light modules
// are imported up front (main.ts loads this module only for a command, never for --version): the command tree
// is loaded after the context (or not at all, for a shortcut), and execa with the first command that spawns.
import { homedir, hostname, networkInterfaces } from "node:os";
import { systemClock } from "@chopin/agent-link/clock";
import type { execa } from "execa";
import type { CliContext } from "./context";
import { CliError, EXIT, toCliError } from "./errors";
import { createLog, logLevelFromEnv, Secrets } from "./log";
import { hostDirs, resolvePaths, toPlatform } from "./paths";
import { killLiveGroups } from "./planners/live-groups";
import { processWriter } from "./process-writer";
import { findShortcut, runShortcut } from "./shortcuts";
import { CLI_VERSION, detectInstallMethod, selfCommand } from "./version";

function processContext(signal: AbortSignal): CliContext & { closeLog(): void } {
	const platform = toPlatform(process.platform);
	// Not copied: chopin never changes its own environment, and copying it costs every start ~0.3 ms.
	const env = process.env;
	const cwd = process.cwd();
	const home = homedir();
	const paths = resolvePaths({ env, platform, cwd, defaults: hostDirs() });
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
		// Getters: process.stdin is a Node stream that costs ~5 ms to build, and few commands read it.
		stdin: {
			get stream() {
				return process.stdin;
			},
			get isTTY() {
				return Boolean(process.stdin.isTTY);
			},
		},
		env,
		cwd,
		platform,
		arch: process.arch,
		home,
		clock,
		paths,
		fetch: globalThis.fetch,
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
		// Getters: asked by the commands that need them, not by every start.
		get hostname() {
			return hostname();
		},
		networkInterfaces,
		version: CLI_VERSION,
		execPath: process.execPath,
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

/** Runs the command argv names (the user's words, without the binary) and returns its exit code. */
export async function runProcess(argv: readonly string[]): Promise<number> {
	const controller = new AbortController();
	const ctx = processContext(controller.signal);
	const shortcut = findShortcut(argv);
	// Whatever ends this process, no Planner backend it started outlives it (see live-groups.ts).
	process.on("exit", () => killLiveGroups());
	const interrupt = () => {
		// A second Ctrl-C does not wait for the command to wind down (its backends get SIGKILL on exit).
		if (controller.signal.aborted) process.exit(EXIT.interrupted);
		controller.abort(new CliError("interrupted", "Interrupted."));
	};
	process.on("SIGINT", interrupt);
	process.on("SIGTERM", interrupt);
	try {
		if (shortcut) await runShortcut(shortcut, ctx);
		else {
			await import("./zod-jitless");
			await (await import("./program")).runCli(argv, ctx);
		}
		return EXIT.ok;
	} catch (thrown) {
		const error = toCliError(thrown);
		if (error.code === "unexpected") ctx.log.error({ err: thrown }, "command failed unexpectedly");
		ctx.stderr.write(`error: ${ctx.secrets.redact(error.message)}\n`);
		const hint =
			error.code === "unexpected"
				? `This is a bug in chopin; ${ctx.paths.logFile} has the details.`
				: error.hint;
		if (hint) ctx.stderr.write(`hint: ${ctx.secrets.redact(hint)}\n`);
		return error.exitCode;
	} finally {
		process.off("SIGINT", interrupt);
		process.off("SIGTERM", interrupt);
		ctx.closeLog();
	}
}
