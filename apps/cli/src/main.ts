#!/usr/bin/env bun
// The chopin entry point: the only place that reads the real process, builds the context, and turns an error into an exit code.
import { homedir, hostname, networkInterfaces } from "node:os";
import { systemClock } from "@chopin/agent-link/clock";
import { execa } from "execa";
import { WebSocket } from "ws";
import type { CliContext, Writer } from "./context";
import { CliError, EXIT, toCliError } from "./errors";
import { createLog, logLevelFromEnv, Secrets } from "./log";
import { hostDirs, resolvePaths, toPlatform } from "./paths";
import { runCli } from "./program";
import { CLI_VERSION, detectInstallMethod, selfCommand } from "./version";

function processWriter(stream: NodeJS.WriteStream): Writer {
	// A reader that went away (`chopin logs | head`) is not an error: stop writing to it, quietly.
	let closed = false;
	const isClosedPipe = (error: unknown) => (error as NodeJS.ErrnoException).code === "EPIPE";
	stream.on("error", (error) => {
		if (!isClosedPipe(error)) throw error;
		closed = true;
	});
	return {
		write: (text) => {
			if (closed) return;
			try {
				stream.write(text);
			} catch (error) {
				if (!isClosedPipe(error)) throw error;
				closed = true;
			}
		},
		get isTTY() {
			return Boolean(stream.isTTY);
		},
		get columns() {
			return stream.isTTY ? stream.columns : undefined;
		},
	};
}

function processContext(signal: AbortSignal): CliContext & { closeLog(): void } {
	const platform = toPlatform(process.platform);
	const env = { ...process.env };
	const cwd = process.cwd();
	const home = homedir();
	const paths = resolvePaths({ env, platform, cwd, defaults: hostDirs() });
	const clock = systemClock();
	const secrets = new Secrets();
	const stdout = processWriter(process.stdout);
	const stderr = processWriter(process.stderr);
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
		stdin: { stream: process.stdin, isTTY: Boolean(process.stdin.isTTY) },
		env,
		cwd,
		platform,
		arch: process.arch,
		home,
		clock,
		paths,
		fetch: globalThis.fetch,
		openWebSocket: (url, protocols, options) => new WebSocket(url, protocols, options),
		spawn: execa,
		hostname: hostname(),
		networkInterfaces,
		version: CLI_VERSION,
		execPath: process.execPath,
		selfCommand: selfCommand(facts),
		installMethod: detectInstallMethod(facts),
		log: log.logger,
		secrets,
		signal,
		closeLog: log.close,
	};
}

async function main(): Promise<number> {
	const controller = new AbortController();
	const ctx = processContext(controller.signal);
	const interrupt = () => {
		// A second Ctrl-C does not wait for the command to wind down.
		if (controller.signal.aborted) process.exit(EXIT.interrupted);
		controller.abort(new CliError("interrupted", "Interrupted."));
	};
	process.on("SIGINT", interrupt);
	process.on("SIGTERM", interrupt);
	try {
		await runCli(process.argv.slice(2), ctx);
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

// No top-level await: `bun build --compile --bytecode` emits CommonJS unless told otherwise.
main().then(
	(code) => {
		process.exitCode = code;
	},
	(error: unknown) => {
		process.stderr.write(`error: ${String(error)}\n`);
		process.exitCode = EXIT.error;
	},
);
