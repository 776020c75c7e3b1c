// What a control-channel attempt's outcome means for the link: the one sentence status and the log give, whether it
// ends the link for good (a final refusal or close), and how long to wait before the next attempt.
import { RECONNECT_SCHEDULE_MS } from "@chopin/agent-link/backoff";
import { MACHINE_CLOSE, MACHINE_REFUSALS } from "@chopin/agent-link/machine";
import { CliError } from "../program/errors";
import { isFinalRefusal } from "../server-link/server-errors";
import type { ChannelOutcome } from "./channel";
import type { ControlLinkOptions } from "./control-link";

type RefusalCode = keyof typeof MACHINE_REFUSALS;

/** The shortest wait a server's Retry-After gets: the schedule's first step. */
const RETRY_AFTER_MIN_S = RECONNECT_SCHEDULE_MS[0] / 1000;

const CLOSE_TO_REFUSAL = new Map<number, RefusalCode>(
	Object.entries(MACHINE_REFUSALS).map(([code, r]) => [r.close, code as RefusalCode]),
);

/** The CliError that ends the link for good, for a final refusal or close; undefined for one to retry. */
export function finalErrorOf(
	outcome: ChannelOutcome,
	o: Pick<ControlLinkOptions, "server" | "finalError">,
): CliError | undefined {
	if (outcome.kind === "refused" && isFinalRefusal(outcome.body?.code)) {
		return o.finalError(outcome.body.code, outcome.body.message);
	}
	if (outcome.kind !== "closed") return undefined;
	if (outcome.code === MACHINE_CLOSE.replaced) {
		return new CliError(
			"machine-replaced",
			`Another chopin process connected to ${o.server} with this machine's credential and now serves it, so this one stopped.`,
			"One daemon serves a machine. If the state directory was copied to another computer, run `chopin disconnect` on one of them and pair it on its own.",
		);
	}
	const code = outcome.revoked?.code ?? CLOSE_TO_REFUSAL.get(outcome.code);
	return code ? o.finalError(code, outcome.revoked?.message ?? outcome.reason) : undefined;
}

/** How long to wait before the next attempt, and why. */
export function nextDelay(
	outcome: ChannelOutcome,
	started: number,
	{ clock, backoff }: Pick<ControlLinkOptions, "clock" | "backoff">,
): { delayMs: number; why: string } {
	if (outcome.kind === "ended") return { delayMs: 0, why: "the network changed or the machine woke up" };
	if (
		outcome.kind === "closed" &&
		(outcome.code === MACHINE_CLOSE.restarting || outcome.restartingWithinMs !== undefined)
	) {
		// A proxy in front of Chopin holds the upgrade until the new process answers: do not wait.
		return { delayMs: 0, why: "the server is restarting" };
	}
	// The server said when to come back (503 server-busy while it welcomes a crowd, 1 to 3 s drawn per answer):
	// that, and no step of the schedule spent. Taking the longer of the two sent a machine refused a few times
	// in a storm to the 60 s steps, each further refusal another minute away (issue 19).
	const retryAfter = outcome.kind === "refused" ? outcome.body?.retryAfter : undefined;
	if (retryAfter !== undefined) {
		// Held to the schedule's own bounds: a 0 would have the machine hammer the server, an hour leave it away.
		const seconds = Math.min(Math.max(retryAfter, RETRY_AFTER_MIN_S), RECONNECT_SCHEDULE_MS.at(-1)! / 1000);
		return { delayMs: seconds * 1000, why: "the server asked to come back then" };
	}
	let delayMs = backoff.next();
	// An attempt that never got going already waited its share (a stalled network holds it for
	// up to the handshake timeout): the schedule counts from when it started.
	if (outcome.kind !== "closed") delayMs = Math.max(0, delayMs - (clock.now() - started));
	return { delayMs, why: "schedule" };
}

/** One sentence for status and the log: why the channel is down. */
export function describeOutcome(outcome: ChannelOutcome): string {
	switch (outcome.kind) {
		case "refused":
			return `the server refused the connection (HTTP ${outcome.status}${outcome.body ? `, ${outcome.body.code}: ${outcome.body.message}` : ""})`;
		case "failed":
			return `could not connect: ${outcome.reason}`;
		case "closed":
			if (outcome.silent) return "nothing came from the server for too long";
			if (outcome.code === MACHINE_CLOSE.restarting) return "the server is restarting";
			return `the connection closed (${outcome.code}${outcome.reason ? ` ${outcome.reason}` : ""})`;
		case "ended":
			return outcome.why === "stop" ? "stopped" : "the network changed or the machine woke up";
	}
}

export function summary(outcome: ChannelOutcome): Record<string, unknown> {
	switch (outcome.kind) {
		case "refused":
			return { kind: outcome.kind, status: outcome.status, code: outcome.body?.code };
		case "failed":
			return { kind: outcome.kind, reason: outcome.reason };
		case "closed":
			return { kind: outcome.kind, code: outcome.code, silent: outcome.silent ?? false };
		case "ended":
			return { kind: outcome.kind, why: outcome.why };
	}
}
