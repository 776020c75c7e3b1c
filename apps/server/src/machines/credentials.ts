// Machine and Planner credentials: 32 random bytes behind a prefix, shown once, kept only as SHA-256 digests.
import { timingSafeEqual } from "node:crypto";
import { MACHINE_CREDENTIAL_PATTERN } from "@chopin/agent-link/machine";
import { randomToken, sha256Hex } from "../auth/tokens";

export const MACHINE_PREFIX = "chopin_m_";
export const PLANNER_PREFIX = "chopin_p_";
export const PLANNER_CREDENTIAL_PATTERN = /^chopin_p_[A-Za-z0-9_-]{43}$/;

/** A new machine credential: `chopin_m_` and 43 base64url characters. */
export function newMachineCredential(): string {
	return `${MACHINE_PREFIX}${randomToken()}`;
}

/** A new Planner credential: `chopin_p_` and 43 base64url characters. */
export function newPlannerCredential(): string {
	return `${PLANNER_PREFIX}${randomToken()}`;
}

export function isMachineCredential(token: string): boolean {
	return MACHINE_CREDENTIAL_PATTERN.test(token);
}

export function isPlannerCredential(token: string): boolean {
	return PLANNER_CREDENTIAL_PATTERN.test(token);
}

/** What is stored and looked up: the hex SHA-256 of the credential. */
export function credentialDigest(token: string): string {
	return sha256Hex(token);
}

/**
 * Compares two hex digests in constant time. A row found by its digest is compared once more,
 * so no answer depends on how far an index lookup's comparison got.
 */
export function sameDigest(a: string, b: string): boolean {
	const x = Buffer.from(a, "hex");
	const y = Buffer.from(b, "hex");
	return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}
