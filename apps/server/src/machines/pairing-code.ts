// The short confirmation code a pairing prints (XXXX-XXXX), from an alphabet without look-alikes.
import { timingSafeEqual } from "node:crypto";

/** A-Z without I and O, and 2-9: 32 symbols, so 8 of them carry 40 random bits. */
export const CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

export function newPairingCode(): string {
	const bytes = crypto.getRandomValues(new Uint8Array(8));
	// 256 is a multiple of 32, so the low five bits of each byte are uniform.
	const symbols = [...bytes].map((b) => CODE_ALPHABET[b & 31]).join("");
	return `${symbols.slice(0, 4)}-${symbols.slice(4)}`;
}

/** Compares a typed code with the pairing's, in constant time, forgiving case. */
export function sameCode(typed: string, code: string): boolean {
	const a = Buffer.from(typed.trim().toUpperCase());
	const b = Buffer.from(code);
	return a.length === b.length && timingSafeEqual(a, b);
}
