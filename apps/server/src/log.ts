// The server's logger: one JSON object per line on stderr, every line passed through token redaction.

import type { Clock } from "@chopin/agent-link/clock";
import { createRedactor } from "@chopin/agent-link/redact";

export type Level = "debug" | "info" | "warn" | "error";
export type Fields = Record<string, unknown>;

const RANK: Record<Level | "silent", number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
	debug(msg: string, fields?: Fields): void;
	info(msg: string, fields?: Fields): void;
	warn(msg: string, fields?: Fields): void;
	error(msg: string, fields?: Fields): void;
	/** A logger that adds these fields to every line, e.g. `{ route: "agent" }`. */
	child(fields: Fields): Logger;
}

export interface LoggerOptions {
	level?: Level | "silent";
	/** Where finished lines go (without the newline). Defaults to stderr. */
	write?: (line: string) => void;
	/** For `time`; defaults to the system time. */
	clock?: Pick<Clock, "now">;
	/** Exact strings to mask besides token shapes (a client secret, say). */
	secrets?: Iterable<string>;
}

export function createLogger(options: LoggerOptions = {}): Logger {
	const threshold = RANK[options.level ?? "info"];
	const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
	const now = options.clock ? () => options.clock!.now() : () => Date.now();
	const redact = createRedactor(options.secrets);

	const make = (base: Fields): Logger => {
		const emit = (level: Level, msg: string, fields?: Fields) => {
			if (RANK[level] < threshold) return;
			const record = { level, time: new Date(now()).toISOString(), msg, ...base, ...fields };
			// Redact the finished line, so a token hidden anywhere (a URL, an error message) is masked.
			write(redact(serialise(record)));
		};
		return {
			debug: (msg, fields) => emit("debug", msg, fields),
			info: (msg, fields) => emit("info", msg, fields),
			warn: (msg, fields) => emit("warn", msg, fields),
			error: (msg, fields) => emit("error", msg, fields),
			child: (fields) => make({ ...base, ...fields }),
		};
	};
	return make({});
}

/** JSON that never throws: errors become { name, message, code, stack }, bigints strings, an object met twice "[repeated]". */
function serialise(record: Fields): string {
	const seen = new WeakSet<object>();
	return JSON.stringify(record, (_key, value: unknown) => {
		if (typeof value === "bigint") return value.toString();
		if (value instanceof Error) {
			const code = (value as { code?: unknown }).code;
			return {
				name: value.name,
				message: value.message,
				...(code !== undefined && { code }),
				stack: value.stack,
			};
		}
		if (value !== null && typeof value === "object") {
			if (seen.has(value)) return "[repeated]";
			seen.add(value);
		}
		return value;
	});
}
