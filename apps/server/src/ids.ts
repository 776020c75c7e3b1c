// Short random ids for documents, messages and decisions: lower-case base32, safe in URLs and file names.

const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

/** `length` characters of lower-case base32 (5 random bits each; 12 give 60 bits). */
export function randomId(length = 12): string {
	const bytes = crypto.getRandomValues(new Uint8Array(length));
	let out = "";
	// 256 is a multiple of 32, so the low five bits of each byte are uniform.
	for (const byte of bytes) out += ALPHABET[byte & 31];
	return out;
}

export const ID_PATTERN = /^[a-z2-7]{12}$/;
