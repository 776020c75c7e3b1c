// The machine credential store: <state>/credential.json at 0600, written atomically, never printed.
import { chmodSync, statSync } from "node:fs";
import { z } from "zod";
import { recordChecked } from "../local/checked-files";
import { readJsonFile, removeFile, writeJsonAtomic } from "../local/files";
import type { Logger } from "../local/log";
import { type CliPaths, ensurePrivateDir, type Platform } from "../local/paths";
import type { Secrets } from "../local/secrets";
import { CliError } from "../program/errors";
import { storedOriginSchema } from "../server-link/server-origin";

/**
 * A machine token: `chopin_m_` and a random base64url body. Requiring the shape the redactor
 * masks (`chopin_[pmr]_` and 20+ characters) means a stored token is masked in every log line
 * by shape alone, even before it is registered as a secret.
 */
export const machineTokenSchema = z
	.string()
	.regex(/^chopin_m_[A-Za-z0-9_-]{20,}$/, "is not a chopin machine token");

export const credentialSchema = z.strictObject({
	server: storedOriginSchema,
	token: machineTokenSchema,
	machineId: z.string().min(1).max(200),
	createdAt: z.iso.datetime({ offset: true }),
});

export type Credential = z.infer<typeof credentialSchema>;

export interface CredentialDeps {
	paths: Pick<CliPaths, "stateDir" | "credentialFile" | "checkedFile">;
	platform: Platform;
	secrets: Secrets;
	log?: Logger;
}

/** The stored credential, or undefined when none is. Its token is registered as a secret at once. */
export function loadCredential(deps: CredentialDeps): Credential | undefined {
	const file = deps.paths.credentialFile;
	const credential = readJsonFile(
		file,
		credentialSchema,
		{ code: "credential-invalid", what: "machine credential" },
		{ onAccepted: (text) => recordChecked(deps.paths, file, text) },
	);
	if (!credential) return undefined;
	deps.secrets.add(credential.token);
	tightenMode(deps);
	return credential;
}

/** The stored credential, or a not-paired CliError naming the next command. */
export function requireCredential(deps: CredentialDeps): Credential {
	const credential = loadCredential(deps);
	if (!credential) {
		throw new CliError(
			"not-paired",
			"This machine is not paired with a Chopin server.",
			"Run `chopin connect` first.",
		);
	}
	return credential;
}

export function saveCredential(deps: CredentialDeps, credential: Credential): void {
	const checked = credentialSchema.parse(credential);
	deps.secrets.add(checked.token);
	ensurePrivateDir(deps.paths.stateDir);
	writeJsonAtomic(deps.paths.credentialFile, checked, { mode: 0o600 });
}

/** Forgets the credential. Returns whether one was stored; deleting nothing is not an error. */
export function deleteCredential(deps: CredentialDeps): boolean {
	return removeFile(deps.paths.credentialFile);
}

/** A credential file someone made readable by others is put back to 0600, and the change logged. */
function tightenMode(deps: CredentialDeps): void {
	if (deps.platform === "win32") return;
	const file = deps.paths.credentialFile;
	const mode = statSync(file).mode & 0o777;
	if ((mode & 0o077) === 0) return;
	chmodSync(file, 0o600);
	deps.log?.warn(
		{ file, mode: mode.toString(8) },
		"credential file was readable by others; set it back to 0600",
	);
}
