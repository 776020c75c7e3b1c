// How this machine makes sure everything a backend or a run starts can be stopped, chosen once per daemon from what
// works here: a PID namespace (Linux with bubblewrap), the daemon as child subreaper plus a mark in each process's
// environment (Linux without), the process group (macOS and other POSIX), the process tree (Windows).
import type { Logger } from "../local/log";
import type { Platform } from "../local/paths";
import { CliError } from "../program/errors";
import { addExitSweep } from "./live-scopes";
import { killAdoptedOrphans, setChildSubreaper } from "./subreaper";

export const CONTAINMENT_MODES = ["pid-namespace", "subreaper", "group", "tree"] as const;
export type ContainmentMode = (typeof CONTAINMENT_MODES)[number];

export interface Containment {
	mode: ContainmentMode;
	/** bubblewrap's path, in the pid-namespace mode. */
	bwrap?: string;
	/** Why this mode (what was missing for a stronger one), for the log. */
	reason: string;
}

/** The variable that asks for a mode (tests, or a machine whose bubblewrap misbehaves). */
export const CONTAINMENT_VARIABLE = "CHOPIN_CONTAINMENT";

export interface ContainmentOptions {
	platform: Platform;
	env?: Readonly<Record<string, string | undefined>>;
	which?: (command: string) => string | null;
	/** Whether bubblewrap can make a PID namespace here (by default: run it once on `true`). */
	probeBwrap?: (bwrap: string) => boolean;
	/** Makes this process a child subreaper; false when the kernel or libc would not (default: prctl). */
	becomeSubreaper?: () => boolean;
}

let chosen: Containment | undefined;
let fallback: Containment | undefined;

/**
 * The daemon's set-up, once at its start: probes what works, becomes the child subreaper in that
 * mode (its adopted orphans are then killed on a hard exit too), logs the choice and caches it for
 * every scope this process launches. Later calls return the first choice.
 */
export function setUpContainment(options: ContainmentOptions & { log?: Logger }): Containment {
	if (chosen) return chosen;
	chosen = chooseContainment(options);
	if (chosen.mode === "subreaper") addExitSweep(() => killAdoptedOrphans());
	options.log?.info({ containment: chosen.mode, reason: chosen.reason }, describeContainment(chosen));
	return chosen;
}

/**
 * What a scope uses when not told: the daemon's choice, or in a process that never set one up (a
 * test, a command that is not the daemon) the best mode that needs no process-wide change: the PID
 * namespace when bubblewrap works, else the group (on Linux still with the environment mark).
 */
export function currentContainment(platform: Platform): Containment {
	if (chosen) return chosen;
	fallback ??= chooseContainment({ platform, becomeSubreaper: () => false });
	return fallback;
}

export function chooseContainment(options: ContainmentOptions): Containment {
	const env = options.env ?? {};
	const wanted = parseWanted(env[CONTAINMENT_VARIABLE], options.platform);
	if (options.platform === "win32")
		return { mode: "tree", reason: "Windows ends a process tree with taskkill /T /F" };
	const notes: string[] = [];
	if (wanted) notes.push(`${CONTAINMENT_VARIABLE} asked for ${wanted}`);
	if (options.platform === "linux") {
		if (wanted === undefined || wanted === "pid-namespace") {
			const bwrap = (options.which ?? ((command) => Bun.which(command)))("bwrap");
			if (bwrap && (options.probeBwrap ?? probeBwrap)(bwrap))
				return { mode: "pid-namespace", bwrap, reason: reasonOf(notes, "bubblewrap makes PID namespaces") };
			notes.push(bwrap ? `${bwrap} could not make a PID namespace` : "bubblewrap (bwrap) is not installed");
		}
		if (wanted !== "group") {
			if ((options.becomeSubreaper ?? (() => setChildSubreaper(true)))())
				return { mode: "subreaper", reason: reasonOf(notes, "prctl(PR_SET_CHILD_SUBREAPER) worked") };
			notes.push("the daemon could not become a child subreaper");
		}
	}
	return { mode: "group", reason: reasonOf(notes, "process groups are what this system offers") };
}

/** One sentence for the log: what is guaranteed. */
export function describeContainment(containment: Containment): string {
	switch (containment.mode) {
		case "pid-namespace":
			return "Processes a backend or run starts each run in a PID namespace (bubblewrap): stopping one ends all it started.";
		case "subreaper":
			return "Processes a backend or run starts are found by their group, their parents and the CHOPIN_SCOPE mark in their environment; the daemon adopts their orphans (child subreaper).";
		case "group":
			return "Processes a backend or run starts are stopped by process group: one that leaves its group (setsid) is not found.";
		case "tree":
			return "Processes a backend or run starts are stopped as a process tree (taskkill /T /F).";
	}
}

/**
 * bubblewrap's options for a PID namespace and nothing else: the whole file system as it is
 * (devices included), a /proc of its own. When bwrap (or the namespace's init) dies, the kernel
 * kills every process inside; --die-with-parent makes the daemon's death kill bwrap.
 */
export const NAMESPACE_ARGS = [
	"--dev-bind",
	"/",
	"/",
	"--proc",
	"/proc",
	"--unshare-pid",
	"--die-with-parent",
] as const;

/** The command run in a PID namespace of its own. */
export function namespacedArgv(bwrap: string, argv: readonly string[]): string[] {
	return [bwrap, ...NAMESPACE_ARGS, "--", ...argv];
}

/**
 * A bubblewrap sandbox's argv (sandbox.ts), with the two options a PID namespace needs added
 * right after the program when the sandbox left them out; otherwise unchanged.
 */
export function withPidNamespace(sandboxArgv: readonly string[]): string[] {
	const [bwrap, ...rest] = sandboxArgv;
	const end = rest.indexOf("--");
	const options = end < 0 ? rest : rest.slice(0, end);
	const missing = ["--unshare-pid", "--die-with-parent"].filter((flag) => !options.includes(flag));
	return [bwrap!, ...missing, ...rest];
}

function probeBwrap(bwrap: string): boolean {
	try {
		const result = Bun.spawnSync([bwrap, ...NAMESPACE_ARGS, "--", "true"], {
			stdin: "ignore",
			stdout: "ignore",
			stderr: "ignore",
			timeout: 10_000,
		});
		return result.exitCode === 0;
	} catch {
		return false;
	}
}

function parseWanted(raw: string | undefined, platform: Platform): ContainmentMode | undefined {
	const value = raw?.trim();
	if (!value) return undefined;
	const allowed: readonly string[] =
		platform === "win32" ? ["tree"] : platform === "linux" ? CONTAINMENT_MODES.slice(0, 3) : ["group"];
	if (!allowed.includes(value))
		throw new CliError(
			"option-invalid",
			`${CONTAINMENT_VARIABLE} must be one of ${allowed.join(", ")} on this system, not ${JSON.stringify(value)}.`,
			`Unset ${CONTAINMENT_VARIABLE} to let chopin choose.`,
		);
	return value as ContainmentMode;
}

function reasonOf(notes: readonly string[], last: string): string {
	return [...notes, last].join("; ");
}
