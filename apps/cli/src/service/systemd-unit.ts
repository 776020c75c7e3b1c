// The systemd user unit's text, quoted per systemd.syntax(7), and its ExecStart read back (status needs the program).
import type { ServiceDefinition } from "./definition";
import { FINAL_EXIT_CODES } from "./names";

/** Seconds between a crash and the next start (StartLimitBurst's 5 in 10 s is then never reached). */
export const RESTART_SEC = 5;
/**
 * Seconds systemd waits after SIGTERM before SIGKILL: above the daemon's own bounded stop (the channel's close, a
 * run's 3 s cancel, a backend's 5 s grace), so systemd only kills a daemon that is stuck.
 */
export const TIMEOUT_STOP_SEC = 30;

/**
 * The unit. `KillMode=mixed`: SIGTERM goes to the daemon alone, which stops what it started in order (the backends'
 * and runs' process groups, their token files); only what is left after TimeoutStopSec gets SIGKILL. Final exits
 * (not paired, revoked, ...) are in RestartPreventExitStatus, so a revoked machine stops instead of looping.
 */
export function systemdUnit(definition: ServiceDefinition): string {
	const lines = [
		"# chopin's user service, written by `chopin service install` and removed by `chopin service uninstall`.",
		"# Install again rather than edit it: every install rewrites this file.",
		"[Unit]",
		"Description=Chopin machine daemon (chopin run)",
		"",
		"[Service]",
		"Type=simple",
		`ExecStart=${definition.argv.map(execWord).join(" ")}`,
		...definition.env.map(([name, value]) => `Environment=${environmentWord(`${name}=${value}`)}`),
		"Restart=always",
		`RestartSec=${RESTART_SEC}`,
		`RestartPreventExitStatus=${FINAL_EXIT_CODES.join(" ")}`,
		"KillMode=mixed",
		`TimeoutStopSec=${TIMEOUT_STOP_SEC}`,
		`StandardOutput=append:${specifierEscape(definition.logFile)}`,
		`StandardError=append:${specifierEscape(definition.logFile)}`,
		"",
		"[Install]",
		"WantedBy=default.target",
		"",
	];
	return lines.join("\n");
}

/** `%` starts a specifier (%h, %u...) in every setting used here: `%%` is a literal one. */
function specifierEscape(text: string): string {
	return text.replaceAll("%", "%%");
}

/** A double-quoted word with C-style escapes for `\` and `"`. */
function quoted(text: string): string {
	return `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** An ExecStart word: quoted, `%` escaped, and `$` doubled so that systemd does not expand a variable. */
function execWord(word: string): string {
	return quoted(specifierEscape(word).replaceAll("$", "$$$$"));
}

/** An Environment= assignment: quoted, `%` escaped (systemd expands no `$` there, so it stays single). */
function environmentWord(assignment: string): string {
	return quoted(specifierEscape(assignment));
}

/** The argv of the unit's ExecStart, as execWord wrote it, or undefined when the text has no such line. */
export function unitArgv(text: string): string[] | undefined {
	const line = text.split("\n").find((l) => l.startsWith("ExecStart="));
	if (line === undefined) return undefined;
	const rest = line.slice("ExecStart=".length);
	const words: string[] = [];
	let at = 0;
	while (at < rest.length) {
		if (rest[at] === " ") {
			at++;
			continue;
		}
		if (rest[at] !== '"') return undefined;
		let word = "";
		at++;
		for (;;) {
			const c = rest[at];
			if (c === undefined) return undefined;
			if (c === '"') break;
			if (c === "\\") {
				word += rest[at + 1] ?? "";
				at += 2;
				continue;
			}
			word += c;
			at++;
		}
		at++;
		words.push(word.replaceAll("$$", "$").replaceAll("%%", "%"));
	}
	return words;
}
