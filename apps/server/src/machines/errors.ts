// Every refusal of the machines domain: a stable code, one sentence and a hint (listed in docs/errors.md). No credential ever goes into one.
import { MACHINE_REFUSALS, type MachineRefusalCode } from "@chopin/agent-link/machine";
import { HttpError } from "../http/errors";

/** A refusal that also closes the control channel: its code, sentence and hint. */
export interface MachineRefusal {
	code: MachineRefusalCode;
	message: string;
	hint?: string;
}

export function refusalError(refusal: MachineRefusal): HttpError {
	return new HttpError(MACHINE_REFUSALS[refusal.code].status, refusal.code, refusal.message, refusal.hint);
}

export const machineRevoked = (): MachineRefusal => ({
	code: "machine-revoked",
	message: "This machine was disconnected from Chopin, or Chopin does not know its credential.",
	hint: "Pair it again with `chopin connect`.",
});

export const machineReauthorize = (owner: string): MachineRefusal => ({
	code: "machine-reauthorize",
	message: `This machine's GitHub authorization from ${owner} has ended, so the machine must be paired again.`,
	hint: "Run `chopin connect` again and confirm the pairing in the browser.",
});

export const clientVersionRefused = (need: string, have: string, command: string): MachineRefusal => ({
	code: "client-version-refused",
	message: `This Chopin server needs chopin ${need} or newer, and this machine runs ${have}: upgrade with \`${command}\`.`,
	hint: `Run \`${command}\`, then start chopin again.`,
});

export const repositoryAccessLost = (owner: string, repositories: readonly string[]): MachineRefusal => ({
	code: "repository-access-lost",
	message: `${owner} can no longer push to ${listed(repositories)}, the repositories of this machine's checkouts.`,
	hint: "Ask a repository administrator for push access, or connect a checkout you can push to.",
});

export function clientHeaderInvalid(): HttpError {
	return new HttpError(
		400,
		"client-header-invalid",
		"The request does not name its client in a Chopin-Client header.",
		"Send Chopin-Client: chopin/<version> (<os>-<arch>; <install>), as the chopin CLI does.",
	);
}

export function pairingNotFound(): HttpError {
	return new HttpError(404, "pairing-not-found", "There is no such pairing.", "Run `chopin connect` again.");
}

export function pairingExpired(): HttpError {
	return new HttpError(
		410,
		"pairing-expired",
		"This pairing expired: a pairing must be confirmed and claimed within 5 minutes.",
		"Run `chopin connect` again for a new link and code.",
	);
}

export function pairingClaimed(): HttpError {
	return new HttpError(
		409,
		"pairing-claimed",
		"This pairing's credential was already handed out, and it is handed out only once.",
		"If this machine did not receive it, run `chopin connect` again.",
	);
}

export function pairingConfirmed(): HttpError {
	return new HttpError(
		409,
		"pairing-confirmed",
		"This pairing was already confirmed.",
		"Nothing more is needed: the machine picks up its credential by itself.",
	);
}

export function pairingSecretWrong(): HttpError {
	return new HttpError(
		401,
		"pairing-secret-wrong",
		"The pairing's secret is wrong.",
		"Only the chopin process that started the pairing can claim it.",
	);
}

export function pairingCodeWrong(): HttpError {
	return new HttpError(
		400,
		"pairing-code-wrong",
		"The confirmation code does not match the one this pairing printed.",
		"Type the code chopin printed in the terminal, as XXXX-XXXX.",
	);
}

export function pairingsFull(scope: "server" | "address"): HttpError {
	return new HttpError(
		429,
		"pairings-full",
		scope === "server"
			? "Too many pairings are waiting for confirmation on this server."
			: "Too many pairings from this address are waiting for confirmation.",
		"Confirm or let the waiting pairings expire (5 minutes), then try again.",
		{ retryAfter: 60 },
		{ "retry-after": "60" },
	);
}

export function pairingAccountMismatch(expected: string, got: string): HttpError {
	return new HttpError(
		403,
		"pairing-account-mismatch",
		`GitHub signed in ${got}, but ${expected} confirmed this pairing.`,
		`Sign in to GitHub as ${expected} and confirm the pairing again.`,
	);
}

export function pairingForbidden(login: string, repositories: readonly string[]): HttpError {
	return new HttpError(
		403,
		"repository-forbidden",
		`${login} cannot push to ${listed(repositories)}, so cannot connect this machine.`,
		"Connect a machine only for a repository you can push to or administer.",
	);
}

export function machineNotFound(): HttpError {
	return new HttpError(
		404,
		"machine-not-found",
		"You have no such machine.",
		"See your machines at /machines.",
	);
}

export function plannerRepositoryForbidden(owner: string, repository: string): HttpError {
	return new HttpError(
		403,
		"repository-forbidden",
		`${owner} cannot push to or administer ${repository}, so this machine cannot run its Planner.`,
		"Ask a repository administrator for push access.",
	);
}

export function documentNotFound(): HttpError {
	return new HttpError(404, "not-found", "There is no such document, or it was deleted.");
}

export function documentArchived(id: string): HttpError {
	return new HttpError(
		409,
		"document-archived",
		`Document ${id} is archived, so no Planner runs for it.`,
		"Unarchive it first.",
	);
}

function listed(repositories: readonly string[]): string {
	if (repositories.length <= 1) return repositories[0] ?? "any repository";
	return `${repositories.slice(0, -1).join(", ")} or ${repositories.at(-1)}`;
}
