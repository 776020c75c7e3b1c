/**
 * Token redaction for every log line and every line of a backend's output. Shared by the
 * server and the CLI so both mask the same shapes.
 */

export const REDACTED = "[redacted]";

/** Token shapes that are masked wherever they appear, whoever printed them. */
export const TOKEN_PATTERNS: readonly RegExp[] = [
	/chopin_[pmr]_[A-Za-z0-9_-]{20,}/g,
	/\bgh[pousr]_[A-Za-z0-9]{20,}/g,
	/\bgithub_pat_[A-Za-z0-9_]{20,}/g,
	// Not the words prose puts after "bearer" ("a bearer token is needed"): only what could be a credential.
	/\bBearer\s+(?!(?:tokens?|credentials?|auth(?:entication|orization)?|header|scheme)\b)[A-Za-z0-9._~+/=-]+/gi,
];

/** Masks token shapes in text. */
export function redactTokens(text: string): string {
	// Every shape but a Bearer header has an underscore: most lines have neither, and skip the patterns.
	// A string test, not /bearer/i: the first regular expression a process runs costs it ~0.2 ms.
	if (!text.includes("_") && !text.toLowerCase().includes("bearer")) return text;
	let out = text;
	for (const pattern of TOKEN_PATTERNS) {
		out = out.replace(pattern, (match) => (/^bearer/i.test(match) ? `Bearer ${REDACTED}` : REDACTED));
	}
	return out;
}

/**
 * A redactor that also masks the given secrets (a credential, --env values), longest first
 * so a secret that contains another is masked whole. Secrets shorter than 4 characters are
 * ignored: masking "1" everywhere would make output unreadable and protect nothing.
 */
export function createRedactor(secrets: Iterable<string> = []): (text: string) => string {
	const list = [...new Set(secrets)].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
	return (text) => {
		let out = text;
		for (const secret of list) out = out.split(secret).join(REDACTED);
		return redactTokens(out);
	};
}
