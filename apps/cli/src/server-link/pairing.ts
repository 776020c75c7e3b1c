// Pairing, the CLI's half: start a pairing, show its link and code, poll the claim every pollMs until a person
// confirms it (the credential), it expires, or the server refuses it. Nothing is stored here; the caller stores.
import type { Checkout, MachineSummary } from "@chopin/agent-link/machine";
import type { CliContext } from "../program/context";
import { CliError } from "../program/errors";
import type { PairingUi } from "./pairing-ui";
import type { ServerApi } from "./server-api";

/** The server's pollMs, kept within sane bounds whatever it says. */
const MIN_POLL_MS = 500;
const MAX_POLL_MS = 10_000;
/**
 * The server's 410 ends a pairing; this is only the backstop for a server that stops answering
 * for good while we wait (its expiresAt is on its clock, not ours, so it is not compared here).
 */
export const PAIRING_GIVE_UP_MS = 10 * 60_000;

export interface Paired {
	token: string;
	machine: MachineSummary;
}

export async function pairMachine(
	ctx: Pick<CliContext, "clock" | "signal" | "log" | "secrets">,
	api: ServerApi,
	request: { label: string; checkouts: Checkout[] },
	ui: PairingUi,
): Promise<Paired> {
	const started = await api.startPairing(request);
	// The secret claims the credential: it must never reach the log, even by accident.
	ctx.secrets.add(started.secret);
	ctx.log.info({ pairing: started.id, label: request.label }, "pairing started");
	ui.started({
		server: api.server,
		label: request.label,
		link: started.link,
		code: started.code,
		expiresAt: started.expiresAt,
	});
	const pollMs = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, started.pollMs));
	const giveUpAt = ctx.clock.now() + PAIRING_GIVE_UP_MS;
	try {
		let wait = pollMs;
		for (;;) {
			await sleep(ctx, Math.min(wait, Math.max(0, giveUpAt - ctx.clock.now())));
			wait = pollMs;
			let answer: Awaited<ReturnType<ServerApi["claim"]>>;
			try {
				answer = await api.claim(started.id, started.secret);
			} catch (error) {
				if (!isPassing(error)) throw error;
				if (ctx.clock.now() >= giveUpAt) throw expired();
				// A 429 or 5xx is "wait and retry", never the end: the server's Retry-After says how long.
				wait = Math.max(pollMs, error.retryAfterMs ?? 0);
				ctx.log.warn(
					{ pairing: started.id, reason: error.message, status: error.status, waitMs: wait },
					"pairing poll failed; polling on",
				);
				ui.waiting(passingProblem(error));
				continue;
			}
			if (answer.status === "claimed") {
				ctx.secrets.add(answer.credential);
				ctx.log.info({ pairing: started.id, machine: answer.machine.id }, "pairing claimed");
				ui.paired({ owner: answer.machine.owner, label: answer.machine.label, server: api.server });
				return { token: answer.credential, machine: answer.machine };
			}
			ui.waiting(undefined);
		}
	} catch (error) {
		const failure = error instanceof CliError ? error : undefined;
		if (failure) {
			ctx.log.info({ pairing: started.id, code: failure.code }, "pairing ended without a credential");
			ui.failed(failure);
		}
		throw error;
	}
}

/** A refusal the poll waits out: no answer, a 5xx, or a 429 (rate-limited, or a proxy's), with or without Retry-After. */
function isPassing(error: unknown): error is CliError {
	if (!(error instanceof CliError)) return false;
	return error.code === "server-unreachable" || error.status === 429;
}

function passingProblem(error: CliError): string {
	if (error.status === 429) {
		const seconds = Math.ceil((error.retryAfterMs ?? 0) / 1000);
		return seconds > 0 ? `The server asked to wait ${seconds} s.` : "The server asked to wait.";
	}
	return `The server did not answer (${error.message.replace(/\.$/, "")}).`;
}

async function sleep(ctx: Pick<CliContext, "clock" | "signal">, ms: number): Promise<void> {
	try {
		await ctx.clock.sleep(ms, ctx.signal);
	} catch {
		throw new CliError("interrupted", "Interrupted: the pairing was cancelled and nothing was stored.");
	}
}

function expired(): CliError {
	return new CliError(
		"pairing-expired",
		"The pairing expired before it was confirmed; nothing was stored.",
		"Run `chopin connect` again for a new link and code, and confirm it within 5 minutes.",
	);
}
