// `chopin logs [-f]`: the end of chopin's log, readable (or raw JSON lines), following it across rotations.
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { Command } from "commander";
import { z } from "zod";
import { formatLine } from "../local/log";
import type { CliContext } from "../program/context";
import { CliError } from "../program/errors";
import { parseOptions } from "../program/options";
import { examples, type Run } from "./help";

/** How often -f looks for new lines. */
export const FOLLOW_POLL_MS = 500;

export const logsOptionsSchema = z.strictObject({
	follow: z.boolean(),
	lines: z.coerce
		.number({ error: "must be a number" })
		.int("must be a whole number")
		.min(0, "must be 0 or more")
		.max(100_000, "must be at most 100000"),
	json: z.boolean(),
});
export type LogsOptions = z.infer<typeof logsOptionsSchema>;

export function logsCommand(ctx: CliContext, run: Run<LogsOptions> = runLogs): Command {
	const command = new Command("logs");
	return command
		.description("Print the end of chopin's log; -f keeps printing new lines.")
		.option("-f, --follow", "keep printing lines as they are written (Ctrl-C stops)", false)
		.option("-n, --lines <count>", "how many of the last lines to print", "100")
		.option("--json", "print the raw JSON lines instead of readable ones", false)
		.addHelpText(
			"after",
			examples([
				["The last 100 lines", "chopin logs"],
				["Watch the daemon work", "chopin logs -f"],
				["Errors only, as JSON", "chopin logs -n 1000 --json | jq 'select(.level >= 50)'"],
			]),
		)
		.action(async () => run(parseOptions(logsOptionsSchema, command.opts(), "logs"), ctx));
}

export async function runLogs(options: LogsOptions, ctx: CliContext): Promise<void> {
	const file = ctx.paths.logFile;
	const print = (line: string) => {
		const text = options.json ? `${line}\n` : formatLine(line);
		if (text !== undefined) ctx.stdout.write(text);
	};
	let position = 0;
	let ino: number | undefined;
	const start = readFrom(file, 0);
	if (start) {
		const { lines, rest } = completeLines(start.data);
		for (const line of options.lines === 0 ? [] : lines.slice(-options.lines)) print(line);
		position = start.end - Buffer.byteLength(rest);
		ino = start.ino;
	} else if (!options.follow) {
		ctx.stderr.write(`No log yet at ${file}.\n`);
		return;
	}
	if (!options.follow) return;
	// Follow: poll on the injected clock, and start over at the top of a new file after a rotation.
	for (;;) {
		try {
			await ctx.clock.sleep(FOLLOW_POLL_MS, ctx.signal);
		} catch {
			throw new CliError("interrupted", "Stopped following the log.");
		}
		let current: { ino: number; size: number } | undefined;
		try {
			current = statSync(file);
		} catch {
			continue; // between a rotation's rename and the next line: try again
		}
		if (current.ino !== ino || current.size < position) {
			ino = current.ino;
			position = 0;
		}
		const text = readFrom(file, position);
		if (!text) continue;
		const { lines, rest } = completeLines(text.data);
		for (const line of lines) print(line);
		position = text.end - Buffer.byteLength(rest);
	}
}

function readFrom(file: string, start: number): { data: string; end: number; ino: number } | undefined {
	let fd: number;
	try {
		fd = openSync(file, "r");
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
		throw error;
	}
	try {
		const stat = fstatSync(fd);
		const length = Math.max(0, stat.size - start);
		const buffer = Buffer.alloc(length);
		let read = 0;
		while (read < length) {
			const n = readSync(fd, buffer, read, length - read, start + read);
			if (n === 0) break;
			read += n;
		}
		return { data: buffer.subarray(0, read).toString("utf8"), end: start + read, ino: stat.ino };
	} finally {
		closeSync(fd);
	}
}

/** Whole lines, and the partial line a writer is still in the middle of. */
function completeLines(data: string): { lines: string[]; rest: string } {
	const cut = data.lastIndexOf("\n");
	if (cut < 0) return { lines: [], rest: data };
	return {
		lines: data
			.slice(0, cut)
			.split("\n")
			.filter((line) => line !== ""),
		rest: data.slice(cut + 1),
	};
}
