// The CLI's log: pino JSON lines to <state>/logs/chopin.log (rotated by size), every line redacted, echoed readably to a TTY.

import type { Clock } from "@chopin/agent-link/clock";
import type { LogFn, Logger as PinoLogger } from "pino";
import { ensurePrivateDir } from "./paths";
import type { RotatingFile } from "./rotating-file";
import type { Secrets } from "./secrets";

/** The part of pino's logger the CLI uses. */
export type Logger = Pick<PinoLogger, "debug" | "info" | "warn" | "error">;

export const LOG_MAX_BYTES = 10 * 1024 * 1024;
export const LOG_KEEP = 5;

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace";

/** pino's level numbers (its defaults), known here so a level check needs no pino (nor zod: every command logs). */
const LEVEL_VALUES: Record<LogLevel, number> = {
	trace: 10,
	debug: 20,
	info: 30,
	warn: 40,
	error: 50,
	fatal: 60,
};
const LEVEL_LABELS = new Map(Object.entries(LEVEL_VALUES).map(([label, value]) => [value, label]));

/** CHOPIN_LOG_LEVEL, or info when it is unset or not a level. */
export function logLevelFromEnv(value: string | undefined): LogLevel {
	const level = value?.trim().toLowerCase() ?? "";
	return Object.hasOwn(LEVEL_VALUES, level) ? (level as LogLevel) : "info";
}

export interface LogOptions {
	file: string;
	secrets: Secrets;
	clock: Clock;
	level?: LogLevel;
	/** Where readable lines go when it is a TTY (a service's stderr is not, and its log is the file). */
	stderr?: { write(text: string): void; isTTY: boolean };
	/** The lowest level echoed to the TTY. */
	echoLevel?: LogLevel;
	maxBytes?: number;
	keep?: number;
}

export interface CliLog {
	logger: Logger;
	/** Closes the file; later lines reopen it. */
	close(): void;
}

/**
 * A pino logger with a synchronous destination. pino transports run in worker threads, which
 * break inside `bun build --compile` binaries, so the file (and its rotation) is written here.
 * The file is opened on the first line, so commands that log nothing create nothing; pino itself
 * is loaded on the first line at an enabled level (~5 ms of start-up: docs/install.md § Start-up time).
 */
export function createLog(options: LogOptions): CliLog {
	// Made on the first line: rotating-file.ts imports node:fs (~4 ms), which a command that logs nothing never needs.
	let opened: RotatingFile | undefined;
	const file = (): RotatingFile => {
		if (opened) return opened;
		const { RotatingFile } = require("./rotating-file") as typeof import("./rotating-file");
		opened = new RotatingFile({
			path: options.file,
			maxBytes: options.maxBytes ?? LOG_MAX_BYTES,
			keep: options.keep ?? LOG_KEEP,
			// node:path required here, with the file: a command that logs nothing never loads it.
			prepare: () =>
				ensurePrivateDir((require("node:path") as typeof import("node:path")).dirname(options.file)),
		});
		return opened;
	};
	// Asked on the first line, not here: whether stderr is a terminal costs Node's stream (process-writer.ts).
	let echo: LogOptions["stderr"] | null | undefined;
	const echoAt = LEVEL_VALUES[options.echoLevel ?? "info"];
	let fileBroken = false;
	const destination = {
		write(line: string): void {
			try {
				file().write(line);
			} catch (error) {
				// A log that cannot be written must not fail the command: say so once, carry on.
				if (!fileBroken) {
					fileBroken = true;
					options.stderr?.write(
						`chopin: cannot write the log ${options.file}: ${(error as Error).message}\n`,
					);
				}
			}
			if (echo === undefined) echo = options.stderr?.isTTY ? options.stderr : null;
			if (!echo) return;
			const text = formatLine(line, echoAt);
			if (text !== undefined) echo.write(text);
		},
	};
	const level = options.level ?? "info";
	let pinoLogger: PinoLogger | undefined;
	const real = (): PinoLogger => {
		// require, not import(): logging is synchronous. Through pino-load.ts, so that pino gets a chunk of its own.
		const { pino } = require("./pino-load") as typeof import("./pino-load");
		pinoLogger ??= pino(
			{
				level,
				base: { pid: process.pid },
				timestamp: () => `,"time":"${new Date(options.clock.now()).toISOString()}"`,
				// Every line, whatever logged it, is redacted before it reaches the file or the TTY.
				hooks: { streamWrite: (line) => options.secrets.redact(line) },
			},
			destination,
		);
		return pinoLogger;
	};
	const method = (name: keyof Logger): LogFn => {
		const enabled = LEVEL_VALUES[name] >= LEVEL_VALUES[level];
		return ((...args: Parameters<LogFn>) => {
			if (enabled) real()[name](...args);
		}) as LogFn;
	};
	const logger: Logger = {
		debug: method("debug"),
		info: method("info"),
		warn: method("warn"),
		error: method("error"),
	};
	return { logger, close: () => opened?.close() };
}

/** One readable line (`12:00:01 WARN message key=value`) for a JSON log line, or undefined below `minLevel`. */
export function formatLine(line: string, minLevel = 0): string | undefined {
	let entry: Record<string, unknown>;
	try {
		entry = JSON.parse(line) as Record<string, unknown>;
	} catch {
		return line.endsWith("\n") ? line : `${line}\n`;
	}
	const level = typeof entry.level === "number" ? entry.level : 30;
	if (level < minLevel) return undefined;
	const { level: _level, time, pid: _pid, msg, ...rest } = entry;
	const clock = typeof time === "string" ? time.slice(11, 19) : "";
	const name = (LEVEL_LABELS.get(level) ?? String(level)).toUpperCase().padEnd(5);
	const fields = Object.entries(rest)
		.map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
		.join(" ");
	return `${[clock, name, typeof msg === "string" ? msg : "", fields].filter((part) => part !== "").join(" ")}\n`;
}
