// What a server's refusal means to the CLI: its documented code becomes a CliError with the exit code and next step.
import { type ErrorBody, errorBodySchema, MACHINE_REFUSALS } from "@chopin/agent-link/machine";
import type { CliContext } from "../program/context";
import { CliError } from "../program/errors";
import { upgradeCommandFor } from "../program/version";

export type UpgradeFacts = Pick<
	CliContext,
	"installMethod" | "execPath" | "selfCommand" | "platform" | "home"
>;

/** Reads a refusal's JSON body leniently; undefined when the body is not one. */
export function readErrorBody(json: unknown): ErrorBody | undefined {
	const parsed = errorBodySchema.safeParse(json);
	return parsed.success ? parsed.data : undefined;
}

/** True for the four refusals a machine never retries (revoked, reauthorize, version, access lost). */
export function isFinalRefusal(code: string | undefined): code is keyof typeof MACHINE_REFUSALS {
	return code !== undefined && Object.hasOwn(MACHINE_REFUSALS, code);
}

/** A final refusal (from an HTTP body or the control channel's `revoked`) as the CliError the daemon ends with. */
export function finalRefusalError(
	code: keyof typeof MACHINE_REFUSALS,
	message: string,
	context: { server: string; version: string; upgrade: UpgradeFacts },
): CliError {
	switch (code) {
		case "machine-revoked":
			return new CliError(
				"machine-revoked",
				`${context.server} no longer accepts this machine's credential: it was disconnected (revoked).`,
				"Run `chopin connect` to pair this machine again.",
			);
		case "machine-reauthorize":
			return new CliError(
				"machine-reauthorize",
				withServer(context.server, message),
				"Run `chopin connect` again and confirm the pairing in the browser.",
			);
		case "repository-access-lost":
			return new CliError(
				"repository-access-lost",
				withServer(context.server, message),
				"Ask a repository administrator for push access, or connect a checkout you can push to, then run `chopin run` again.",
			);
		case "client-version-refused":
			return versionRefused(message, context);
	}
}

/**
 * client-version-refused: the server names the version it needs in its message; the command is
 * this CLI's own (version.ts knows where a standalone binary lives and where a source clone is).
 */
export function versionRefused(
	message: string,
	context: { server: string; version: string; upgrade: UpgradeFacts },
): CliError {
	const needed = /needs chopin (\d+\.\d+\.\d+[^\s,;]*?) or newer/.exec(message)?.[1];
	// The server's own command pins the version to install (the newer of its own and the minimum).
	const target =
		/@chopin\/cli@(\d+\.\d+\.\d+[^\s`']*)/.exec(message)?.[1] ??
		/CHOPIN_VERSION='?(\d+\.\d+\.\d+[^\s`';]*?)'?[\s;]/.exec(message)?.[1] ??
		needed;
	const command = upgradeCommandFor(context.upgrade, context.server, target);
	const need = needed ? `chopin ${needed} or newer` : "a newer chopin";
	return new CliError(
		"client-version-refused",
		`${context.server} needs ${need}, and this is chopin ${context.version}: upgrade with \`${command}\`.`,
		`Run \`${command}\`, then start chopin again.`,
	);
}

/** Any refusal of an HTTP call, as a CliError (final refusals, pairing's own, and the rest as server-refused). */
export function refusalError(
	status: number,
	body: ErrorBody | undefined,
	context: { server: string; version: string; upgrade: UpgradeFacts },
): CliError {
	const code = body?.code;
	if (isFinalRefusal(code)) return finalRefusalError(code, body?.message ?? "", context);
	if (status >= 500 || (status === 429 && code !== "rate-limited" && code !== "pairings-full")) {
		return unreachable(context.server, `it answered HTTP ${status}${body ? ` (${body.message})` : ""}`);
	}
	switch (code) {
		case "pairing-expired":
			return new CliError(
				"pairing-expired",
				"The pairing expired before anyone confirmed it; nothing was stored.",
				"Run `chopin connect` again for a new link and code, and confirm it within 5 minutes.",
			);
		case "pairing-claimed":
		case "pairing-not-found":
		case "pairing-secret-wrong":
			return new CliError(
				"pairing-refused",
				withServer(context.server, body?.message ?? `HTTP ${status}`),
				"Nothing was stored. Run `chopin connect` again.",
			);
	}
	// The server's hint already names the wait when it has one ("Wait 5 seconds and try again."): said once.
	const hint =
		body?.hint?.trim() || (body?.retryAfter === undefined ? undefined : `Try again in ${body.retryAfter} s.`);
	return new CliError(
		"server-refused",
		`${context.server} refused the request (${code ?? `HTTP ${status}`}): ${body?.message || "no reason given."}`,
		hint,
	);
}

export function unreachable(server: string, why: string): CliError {
	return new CliError(
		"server-unreachable",
		`Could not reach the Chopin server at ${server}: ${why}.`,
		"Check the server URL and this computer's network, then try again.",
	);
}

function withServer(server: string, message: string): string {
	const text = message.trim() || "no reason given.";
	return `${server}: ${text}`;
}

/**
 * Retry-After (seconds, or an HTTP date) as milliseconds from now, else the body's `retryAfter` seconds; undefined
 * when neither says. Capped at an hour, so a wild value cannot park a caller for good.
 */
export function retryAfterMs(
	header: string | null,
	body: ErrorBody | undefined,
	now: number,
): number | undefined {
	const value = header?.trim();
	let ms: number | undefined;
	if (value && /^\d+$/.test(value)) ms = Number(value) * 1000;
	else if (value && !Number.isNaN(Date.parse(value))) ms = Math.max(0, Date.parse(value) - now);
	else if (body?.retryAfter !== undefined) ms = body.retryAfter * 1000;
	return ms === undefined ? undefined : Math.min(ms, 3_600_000);
}
