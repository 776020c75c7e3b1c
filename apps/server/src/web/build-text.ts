// The words the builds panel shows: each status in plain words, what a machine away means and what to decide, where
// a person's stop or resume stands, which machine runs it, and the small checks the start form makes before sending.
import type { BuildView } from "./api";
import { formatTime } from "./machine-text";

type DisplayStatus = BuildView["displayStatus"];
type Control = NonNullable<BuildView["control"]>;

/** Each status as the badge says it (never colour alone). */
export const STATUS_WORDS: Record<DisplayStatus, string> = {
	offered: "waiting for its machine",
	preparing: "preparing",
	running: "running",
	paused: "paused",
	succeeded: "succeeded",
	failed: "failed",
	blocked: "blocked",
	finished: "finished without a result",
	stopped: "stopped",
	lost: "lost",
	"machine-offline": "machine offline",
	"needs-decision": "needs a decision",
};

export const KIND_WORDS: Record<BuildView["kind"], string> = {
	build: "Build",
	investigation: "Investigation",
};

/** Stage statuses (report_progress) in words. */
export const STAGE_WORDS: Record<BuildView["stages"][number]["status"], string> = {
	pending: "pending",
	running: "running",
	completed: "completed",
	failed: "failed",
	skipped: "skipped",
};

/** "ana's laptop" for its owner (the label is only theirs to see), "@ana's machine" for everyone else. */
export function machineName(machine: BuildView["machine"]): string {
	return machine.label ?? `@${machine.owner}'s machine`;
}

/** What the status means when it is not plain: the machine away, what to decide, an offer waiting. */
export function statusSentence(build: BuildView): string | undefined {
	const machine = machineName(build.machine);
	switch (build.displayStatus) {
		case "offered":
			return `Waiting for ${machine} to take it.`;
		case "machine-offline":
			return (
				`${machine} is offline. Until ${build.offlineUntil === undefined ? "it is back" : formatTime(build.offlineUntil)} ` +
				"this run waits for it; when it comes back holding the run, the run continues, paused until someone resumes it."
			);
		case "needs-decision":
			return (
				`${machine} has been offline past its grace period. Decide: discard this run, or leave it for the ` +
				"machine's return (it continues, paused, if the machine comes back holding it)."
			);
		case "paused":
			return build.machine.online
				? "Paused: it continues when someone resumes it."
				: `Paused: it can be resumed when ${machine} is back.`;
		default:
			return undefined;
	}
}

const VERBS: Record<Control["action"], { ask: string; done: string; doing: string }> = {
	stop: { ask: "stop", done: "Stopped", doing: "stopping" },
	resume: { ask: "resume", done: "Resumed", doing: "resuming" },
	discard: { ask: "discard", done: "Discarded", doing: "discarding" },
};

/** Where a person's stop, resume or discard stands: held for the machine, sent, confirmed, refused or not confirmed. */
export function controlSentence(control: Control): string {
	const verb = VERBS[control.action];
	const who = `@${control.by}`;
	switch (control.state) {
		case "held":
			return `${who} asked to ${verb.ask} it: ${verb.doing} when the machine is back.`;
		case "sent":
			return `${who} asked to ${verb.ask} it: waiting for the machine to confirm.`;
		case "confirmed":
			return `${verb.done} as ${who} asked: the machine confirmed.`;
		case "refused":
			return `The machine could not ${verb.ask} it, as ${who} asked${control.message ? `: ${control.message.replace(/[.\s]+$/, "")}` : ""}.`;
		case "unconfirmed":
			return `Not confirmed: ${who} asked to ${verb.ask} it, and the machine has not answered.`;
	}
}

/** A commit's first 7 characters, as git shows it. */
export function shortCommit(commit: string): string {
	return commit.slice(0, 7);
}

/** A commit as typed: surrounding space dropped, lower case (the server takes full lower-case ids only). */
export function normaliseCommit(typed: string): string {
	return typed.trim().toLowerCase();
}

/** A full commit id: 40 hex characters (SHA-1), or 64 (SHA-256). */
export function isFullCommit(commit: string): boolean {
	return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(commit);
}

/** The brief's first line, cut to `max` characters, for the card's heading. */
export function firstLine(text: string, max = 80): string {
	const line = text.trim().split("\n", 1)[0]!.trim();
	return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
}

/** A pull request's address when it may be a link: https only (anything else shows as text). */
export function pullRequestHref(url: string): string | null {
	try {
		const parsed = new URL(url);
		return parsed.protocol === "https:" ? parsed.href : null;
	} catch {
		return null;
	}
}

/** The default brief of a build: the document's plan is what it implements. */
export const BUILD_BRIEF = "Implement the plan in this document.";
