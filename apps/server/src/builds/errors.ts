// Every refusal of the builds domain: a stable code, one sentence and a hint, with the HTTP status a route answers
// with (listed in docs/errors.md). No credential ever goes into one.
import { DomainError } from "../domain-error";

export class BuildError extends DomainError {
	override readonly name = "BuildError";
}

const what = (kind: "build" | "investigation") => (kind === "build" ? "build" : "investigation");

export function buildNotFound(id: string): BuildError {
	return new BuildError(
		"build-not-found",
		`No run ${id.slice(0, 100)} exists, or you cannot see it.`,
		undefined,
		404,
	);
}

/** No machine of the person's can run it (the spec's "Connect a machine" wording, for a build). */
export function noMachine(kind: "build" | "investigation"): BuildError {
	return new BuildError(
		"no-machine",
		`Connect a machine to start this ${what(kind)}. Choose one with the machine button, or run \`chopin connect\` on a machine that can build.`,
		"Builds and investigations run on one of your own paired machines.",
		409,
	);
}

/** The person's chosen machine is away (named by its label: it is their own). */
export function machineOffline(label: string, kind?: "build" | "investigation"): BuildError {
	return new BuildError(
		"machine-offline",
		kind
			? `Your machine ${JSON.stringify(label)} is offline, so the ${what(kind)} wasn't started. Start it again when it's back.`
			: `Your machine ${JSON.stringify(label)} is offline, so this can't be done now. Try again when it's back.`,
		"Start chopin on that machine, or choose another one with the machine button.",
		409,
	);
}

export function runnerUnavailable(label: string, reason: string | undefined): BuildError {
	return new BuildError(
		"runner-unavailable",
		reason
			? `Your machine ${JSON.stringify(label)} can't run builds: ${reason.replace(/[.\s]+$/, "")}.`
			: `Your machine ${JSON.stringify(label)} can't run builds: its chopin does not run coding agents (upgrade it).`,
		"Give chopin on that machine a coding agent to run (see docs/cli.md), or choose another machine.",
		409,
	);
}

export function documentArchived(): BuildError {
	return new BuildError(
		"document-archived",
		"This document is archived, so nothing can be started for it.",
		"Unarchive it first.",
		409,
	);
}

export function keyReused(): BuildError {
	return new BuildError(
		"build-key-reused",
		"This key was used for another start of this document, with a different kind, base or brief.",
		"Use a new key for each start: the same key makes the same start again.",
		409,
	);
}

export function notPaused(status: string): BuildError {
	return new BuildError(
		"build-not-paused",
		`This run is ${status}, and only a paused run can be resumed.`,
		undefined,
		409,
	);
}
