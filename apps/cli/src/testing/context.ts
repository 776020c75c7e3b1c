// A real CliContext for tests: temp state/config dirs, captured stdout/stderr, a ManualClock, real spawn and log.
import { mkdtempSync, rmSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "@chopin/agent-link/clock";
import { execa } from "execa";
import { WebSocket } from "ws";
import { type CliLog, createLog, type LogOptions } from "../local/log";
import { type Platform, resolvePaths } from "../local/paths";
import { Secrets } from "../local/secrets";
import type { CliContext, Writer } from "../program/context";

export interface CapturedWriter extends Writer {
	text(): string;
}

export function capture(isTTY = false): CapturedWriter {
	let out = "";
	return {
		isTTY,
		columns: isTTY ? 100 : undefined,
		write: (text) => {
			out += text;
		},
		text: () => out,
	};
}

export interface TestContext extends CliContext {
	readonly stdout: CapturedWriter;
	readonly stderr: CapturedWriter;
	readonly clock: ManualClock;
	/** The temp directory everything lives under. */
	readonly root: string;
	readonly controller: AbortController;
	readonly cliLog: CliLog;
	/** Closes the log and removes the temp directory. */
	cleanup(): void;
}

export function makeTempDir(prefix = "chopin-cli-test-"): string {
	return mkdtempSync(join(tmpdir(), prefix));
}

export function createTestContext(
	options: {
		platform?: Platform;
		env?: Record<string, string | undefined>;
		cwd?: string;
		tty?: boolean;
		log?: Partial<Pick<LogOptions, "maxBytes" | "keep" | "level" | "echoLevel">>;
	} = {},
): TestContext {
	const root = makeTempDir();
	const env = {
		PATH: process.env.PATH,
		HOME: join(root, "home"),
		CHOPIN_STATE_DIR: join(root, "state"),
		CHOPIN_CONFIG_DIR: join(root, "config"),
		...options.env,
	};
	const platform = options.platform ?? "linux";
	const cwd = options.cwd ?? root;
	const paths = resolvePaths({
		env,
		platform,
		cwd,
		defaults: {
			data: join(root, "default-data"),
			config: join(root, "default-config"),
			cache: join(root, "default-cache"),
		},
	});
	const clock = new ManualClock();
	const secrets = new Secrets();
	const stdout = capture(options.tty ?? false);
	const stderr = capture(options.tty ?? false);
	const cliLog = createLog({ file: paths.logFile, secrets, clock, stderr, ...options.log });
	const controller = new AbortController();
	return {
		stdout,
		stderr,
		stdin: { stream: process.stdin, isTTY: options.tty ?? false },
		env,
		cwd,
		platform,
		arch: "x64",
		home: env.HOME ?? root,
		clock,
		paths,
		fetch: globalThis.fetch,
		openWebSocket: (url, protocols, socketOptions) => new WebSocket(url, protocols, socketOptions),
		spawn: execa,
		hostname: "test-host",
		user: { uid: process.getuid?.() ?? 0, name: "ana" },
		networkInterfaces,
		version: "0.1.0",
		execPath: process.execPath,
		selfCommand: [process.execPath, join(import.meta.dir, "..", "main.ts")],
		installMethod: "source",
		log: cliLog.logger,
		secrets,
		signal: controller.signal,
		root,
		controller,
		cliLog,
		cleanup: () => {
			cliLog.close();
			rmSync(root, { recursive: true, force: true });
		},
	};
}
