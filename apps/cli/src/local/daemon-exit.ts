// <state>/daemon-exit.json: how the last daemon ended (its exit code, error code, sentence and hint), written as it
// exits (daemon/daemon-end.ts), so `chopin status` and `chopin service status` can say why a machine stopped (revoked, replaced...) once
// nothing runs any more. Read without zod or Node built-ins: status reads it on its quick path.
import type { CliPaths } from "./paths";

export interface DaemonExit {
	version: 1;
	pid: number;
	/** When it ended, ISO 8601. */
	at: string;
	/** The process's exit code (0 for a stop; the mapped 0 under launchd or Task Scheduler is not this). */
	exitCode: number;
	/** The CliError code it ended with, or "stopped" for a clean stop. */
	code: string;
	message: string;
	hint?: string;
	/** The service manager it ran under (`chopin run --service`), if any. */
	service?: string;
	/** The chopin version that ran. */
	daemonVersion: string;
}

/** The last daemon's end, or undefined when none was recorded or the file is not one. */
export function readDaemonExit(paths: Pick<CliPaths, "daemonExitFile">): DaemonExit | undefined {
	let text: string;
	try {
		text = new TextDecoder().decode(Bun.mmap(paths.daemonExitFile));
	} catch {
		return undefined;
	}
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		return undefined;
	}
	if (!isDaemonExit(value)) return undefined;
	return value;
}

function isDaemonExit(value: unknown): value is DaemonExit {
	if (typeof value !== "object" || value === null) return false;
	const v = value as Record<string, unknown>;
	return (
		v.version === 1 &&
		typeof v.pid === "number" &&
		typeof v.at === "string" &&
		typeof v.exitCode === "number" &&
		typeof v.code === "string" &&
		typeof v.message === "string" &&
		(v.hint === undefined || typeof v.hint === "string") &&
		(v.service === undefined || typeof v.service === "string") &&
		typeof v.daemonVersion === "string"
	);
}
