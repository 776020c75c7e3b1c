// The daemon's own output appended to the service's log, for a service manager that keeps none (Task Scheduler).
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { CliContext, Writer } from "../program/context";
import { serviceLogPath } from "../service/names";

export function serviceOutput(ctx: CliContext): CliContext {
	const file = serviceLogPath(ctx.platform, ctx.paths.stateDir);
	const writer: Writer = {
		isTTY: false,
		write(text) {
			try {
				mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
				appendFileSync(file, ctx.secrets.redact(text), { mode: 0o600 });
			} catch {
				// Nowhere to say it: the daemon's own log (logs/chopin.log) has every line anyway.
			}
		},
	};
	// Property by property, so the context's getters stay getters (process-context.ts).
	return Object.defineProperties(
		{},
		{
			...Object.getOwnPropertyDescriptors(ctx),
			stdout: { value: writer, enumerable: true },
			stderr: { value: writer, enumerable: true },
		},
	) as CliContext;
}
