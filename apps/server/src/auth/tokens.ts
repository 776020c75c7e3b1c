// Random tokens, their SHA-256 digests, constant-time comparison, and reading a bearer header.
import { timingSafeEqual } from "node:crypto";
import { unauthorized } from "./errors";

/** 32 random bytes as base64url (43 characters): session ids, OAuth states. */
export function randomToken(): string {
	return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** SHA-256 of text as hex: how tokens are keyed and stored, never the tokens themselves. */
export function sha256Hex(text: string): string {
	return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}

/** Compares two secrets in time that depends only on their length, by comparing their digests. */
export function sameSecret(a: string, b: string): boolean {
	const da = new Bun.CryptoHasher("sha256").update(a).digest();
	const db = new Bun.CryptoHasher("sha256").update(b).digest();
	return timingSafeEqual(da, db);
}

/** The token of an `Authorization: Bearer <token>` header; `unauthorized` when it is missing or malformed. */
export function parseBearer(header: string | null): string {
	if (header === null || header.trim() === "") {
		throw unauthorized("The request has no bearer token.", "Send Authorization: Bearer <token>.");
	}
	const m = /^Bearer +([\x21-\x7e]{1,2048}) *$/i.exec(header);
	if (!m) {
		throw unauthorized(
			"The Authorization header is not a bearer token.",
			"Send Authorization: Bearer <token>.",
		);
	}
	return m[1]!;
}
