// A run's own credential for /mcp: `chopin_r_` and 43 base64url characters, handed to its machine once at the
// claim, kept only as a SHA-256 digest and compared in constant time.
import { timingSafeEqual } from "node:crypto";
import { RUN_CREDENTIAL_PATTERN } from "@chopin/agent-link/machine";
import { randomToken, sha256Hex } from "../auth/tokens";

export const RUN_PREFIX = "chopin_r_";
/** A run's credential keeps working this long after the run ended (never after a discard). */
export const CREDENTIAL_AFTER_END_MS = 15 * 60_000;

export function newRunCredential(): string {
	return `${RUN_PREFIX}${randomToken()}`;
}

export function isRunCredential(token: string): boolean {
	return RUN_CREDENTIAL_PATTERN.test(token);
}

/** What is stored and looked up: the hex SHA-256 of the credential. */
export function runCredentialDigest(token: string): string {
	return sha256Hex(token);
}

/** A row found by its digest is compared once more in constant time, so no answer depends on the index's comparison. */
export function sameDigest(a: string, b: string): boolean {
	const x = Buffer.from(a, "hex");
	const y = Buffer.from(b, "hex");
	return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}
