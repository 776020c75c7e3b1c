#!/usr/bin/env bun
// planner-echo: an EXAMPLE Planner backend, not the product. The connector starts it with
// `chopin connect --planner <doc> --planner-command "bun examples/planner-echo/src/main.ts"`; it attaches
// to the document over the agent connection and echoes every message. Builds the one context here.
import { readFile } from "node:fs/promises";
import { systemClock } from "@chopin/agent-link/clock";
import { runBackend } from "./backend";
import { describeFailure } from "./errors";
import { readSettings } from "./settings";

const log = (line: string) => process.stderr.write(`planner-echo: ${line}\n`);

const stop = new AbortController();
for (const name of ["SIGTERM", "SIGINT"] as const) {
	process.on(name, () => {
		if (!stop.signal.aborted) log(`${name}: stopping`);
		stop.abort();
	});
}

let code: number;
try {
	code = await runBackend({
		settings: readSettings(process.env),
		readFile: (path) => readFile(path, "utf8"),
		log,
		// Not unref'd: a backoff wait is all that keeps the process alive between attempts.
		clock: systemClock(),
		signal: stop.signal,
	});
} catch (error) {
	const failure = describeFailure(error);
	log(failure.line);
	code = failure.exit;
}
process.exit(code);
