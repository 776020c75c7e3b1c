// A service definition read the way its manager reads it, for tests that start the daemon exactly as the unit, plist or
// task would (its program, its variables, its output file) and ask whether its restart rule would start it again.
// The unit's reading follows systemd.syntax(7), which systemd-unit.test.ts checks against systemd's own parse.
import { closeSync, openSync } from "node:fs";
import type { Subprocess } from "bun";
import { plistArgv, xmlUnescape } from "../service/launchd-plist";
import { unitArgv } from "../service/systemd-unit";

export interface StartedDefinition {
	argv: string[];
	env: Record<string, string>;
	/** The file the manager appends the output to (Task Scheduler: none, the daemon appends its own). */
	output: string | undefined;
}

/** The unit's ExecStart, Environment= and StandardOutput=append: path. */
export function readUnit(text: string): StartedDefinition {
	const argv = unitArgv(text);
	if (!argv) throw new Error("the unit has no ExecStart");
	const env: Record<string, string> = {};
	for (const line of text.split("\n")) {
		if (!line.startsWith('Environment="')) continue;
		const word = line.slice('Environment="'.length, -1).replace(/\\(.)/g, "$1").replaceAll("%%", "%");
		env[word.slice(0, word.indexOf("="))] = word.slice(word.indexOf("=") + 1);
	}
	const output = /^StandardOutput=append:(.*)$/m.exec(text)?.[1]?.replaceAll("%%", "%");
	return { argv, env, output };
}

/** systemd's rule for this unit: Restart=always starts it again unless the exit status is in RestartPreventExitStatus. */
export function systemdWouldRestart(text: string, exitCode: number): boolean {
	if (!/^Restart=always$/m.test(text)) throw new Error("the unit does not say Restart=always");
	const prevent = (/^RestartPreventExitStatus=(.*)$/m.exec(text)?.[1] ?? "").split(/\s+/).map(Number);
	return !prevent.includes(exitCode);
}

/** The plist's ProgramArguments, EnvironmentVariables and StandardOutPath. */
export function readPlist(text: string): StartedDefinition {
	const argv = plistArgv(text);
	if (!argv) throw new Error("the plist has no ProgramArguments");
	const dict = /<key>EnvironmentVariables<\/key>\s*<dict>([\s\S]*?)<\/dict>/.exec(text)?.[1] ?? "";
	const env: Record<string, string> = {};
	for (const m of dict.matchAll(/<key>([\s\S]*?)<\/key>\s*<string>([\s\S]*?)<\/string>/g))
		env[xmlUnescape(m[1]!)] = xmlUnescape(m[2]!);
	const output = /<key>StandardOutPath<\/key>\s*<string>([\s\S]*?)<\/string>/.exec(text)?.[1];
	return { argv, env, output: output === undefined ? undefined : xmlUnescape(output) };
}

/** launchd's rule for KeepAlive { SuccessfulExit: false }: it starts the agent again after a non-zero exit only. */
export function launchdWouldRestart(text: string, exitCode: number): boolean {
	if (!/<key>SuccessfulExit<\/key>\s*<false\/>/.test(text))
		throw new Error("the plist does not say SuccessfulExit false");
	return exitCode !== 0;
}

/** Task Scheduler's RestartOnFailure: a run that ends with a non-zero code counts as failed (the worst case). */
export function taskWouldRestart(xml: string, exitCode: number): boolean {
	if (!/<RestartOnFailure>/.test(xml)) throw new Error("the task has no RestartOnFailure");
	return exitCode !== 0;
}

const started = new Set<Subprocess>();

/**
 * Starts the definition as its manager would: its argv and variables only (with HOME, which every manager gives),
 * stdin from nothing, stdout and stderr appended to its output file (or discarded, for a task).
 */
export function startDefinition(
	definition: StartedDefinition,
	home: string,
): Subprocess<"ignore", number, number> {
	const fd = openSync(definition.output ?? "/dev/null", "a", 0o600);
	try {
		const child = Bun.spawn(definition.argv, {
			env: { HOME: home, ...definition.env },
			cwd: home,
			stdin: "ignore",
			stdout: fd,
			stderr: fd,
		});
		started.add(child);
		void child.exited.then(() => started.delete(child));
		return child;
	} finally {
		closeSync(fd);
	}
}

/** Stops every daemon a test started from a definition (SIGTERM, as a manager's stop does), and waits for each. */
export async function stopStartedDefinitions(): Promise<void> {
	const all = [...started];
	for (const child of all) child.kill("SIGTERM");
	await Promise.all(
		all.map(async (child) => {
			const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
			await child.exited;
			clearTimeout(timer);
		}),
	);
}
