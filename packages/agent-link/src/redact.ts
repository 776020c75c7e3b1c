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

/** Masks token shapes in text, also percent-encoded (see maskPercentEncoded). */
export function redactTokens(text: string): string {
	return redactTokensAndSecrets(text, []);
}

function redactTokensAndSecrets(text: string, secrets: readonly string[]): string {
	const decoded = text.includes("%") ? maskPercentEncoded(text, secrets) : text;
	// Every shape but a Bearer header has an underscore: most lines have neither, and skip the patterns.
	// A string test, not /bearer/i: the first regular expression a process runs costs it ~0.2 ms.
	if (!decoded.includes("_") && !decoded.toLowerCase().includes("bearer")) return decoded;
	let out = decoded;
	for (const pattern of TOKEN_PATTERNS) {
		out = out.replace(pattern, (match) => (/^bearer/i.test(match) ? `Bearer ${REDACTED}` : REDACTED));
	}
	return out;
}

/** The token shapes without their global flag, to test a decoded run (a Bearer header holds a space: not here). */
const SHAPES_IN_A_RUN = TOKEN_PATTERNS.slice(0, 3).map((p) => new RegExp(p.source));

/**
 * Percent-encoding beyond encodeURIComponent's (`chopin%5Fp%5F...`, `%2541` for `A` encoded twice): each run of URL
 * characters holding a `%XX` is decoded (up to four times) and masked whole when it then holds a token shape or
 * one of the secrets. One linear scan; a run is a query value or a path segment, so masking it whole hides little.
 */
function maskPercentEncoded(text: string, secrets: readonly string[]): string {
	let out = "";
	let last = 0;
	let start = -1;
	let percent = false;
	const endRun = (end: number) => {
		if (start >= 0 && percent) {
			const decoded = percentDecode(text.slice(start, end));
			if (SHAPES_IN_A_RUN.some((shape) => shape.test(decoded)) || secrets.some((s) => decoded.includes(s))) {
				out += text.slice(last, start) + REDACTED;
				last = end;
			}
		}
		start = -1;
		percent = false;
	};
	for (let i = 0; i < text.length; ) {
		const c = text.charCodeAt(i);
		if (c === 37 && isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2))) {
			if (start < 0) start = i;
			percent = true;
			i += 3;
		} else if (isUrlCharacter(c)) {
			if (start < 0) start = i;
			i++;
		} else {
			endRun(i);
			i++;
		}
	}
	endRun(text.length);
	return out + text.slice(last);
}

function percentDecode(run: string): string {
	let text = run;
	for (let round = 0; round < 4 && text.includes("%"); round++) {
		const next = text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) =>
			String.fromCharCode(Number.parseInt(hex, 16)),
		);
		if (next === text) break;
		text = next;
	}
	return text;
}

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
/** Letters, digits and the characters a token or an encoder leaves as they are: - . _ ~ + */
const isUrlCharacter = (c: number) =>
	(c >= 48 && c <= 57) ||
	(c >= 65 && c <= 90) ||
	(c >= 97 && c <= 122) ||
	c === 45 ||
	c === 46 ||
	c === 95 ||
	c === 126 ||
	c === 43;

/** Secrets shorter than this are never masked (see createRedactor); `chopin connect` warns about them. */
export const MIN_SECRET_LENGTH = 4;

/**
 * A redactor that also masks the given secrets (a credential, --env values), in every form a program commonly
 * prints them in (see secretForms), longest first so a secret that contains another is masked whole. Secrets
 * shorter than 4 characters are ignored: masking "1" everywhere would make output unreadable and protect nothing.
 */
export function createRedactor(secrets: Iterable<string> = []): (text: string) => string {
	const forms = new Set<string>();
	for (const secret of secrets) {
		if (secret.length < MIN_SECRET_LENGTH) continue;
		for (const form of secretForms(secret)) forms.add(form);
	}
	const list = [...forms].sort((a, b) => b.length - a.length);
	const raw = [...new Set(secrets)].filter((secret) => secret.length >= MIN_SECRET_LENGTH);
	return (text) => {
		let out = text;
		for (const form of list) if (out.includes(form)) out = out.split(form).join(REDACTED);
		return redactTokensAndSecrets(out, raw);
	};
}

/** Base64 runs shorter than this, cut out of a longer encoding, are too likely to occur by chance to mask. */
const MIN_BASE64_RUN = 8;

/**
 * A secret as it is, JSON-escaped (also with `\/` and `\uXXXX` escapes, as some encoders write), URL-encoded
 * (encodeURIComponent and a form's `+`), and in base64 and base64url: the whole value's encoding, and the runs of
 * it that stay the same wherever the secret sits inside a longer encoding (`Basic base64(user:secret)`), for
 * each of the three byte alignments. Only the one or two characters that also carry a neighbour's bits stay.
 */
export function secretForms(secret: string): string[] {
	const json = JSON.stringify(secret).slice(1, -1);
	const ascii = json.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
	const forms = [
		secret,
		json,
		json.replaceAll("/", "\\/"),
		ascii,
		ascii.replaceAll("/", "\\/"),
		encodeURIComponent(secret),
		new URLSearchParams({ s: secret }).toString().slice(2),
	];
	const bytes = Buffer.from(secret, "utf8");
	const whole = bytes.toString("base64");
	forms.push(whole, whole.replace(/=+$/, ""), bytes.toString("base64url"));
	for (let skip = 0; skip < 3; skip++) {
		const groups = Math.floor((bytes.length - skip) / 3);
		if (groups <= 0) continue;
		const run = bytes.subarray(skip, skip + groups * 3).toString("base64");
		if (run.length < MIN_BASE64_RUN) continue;
		forms.push(run, run.replaceAll("+", "-").replaceAll("/", "_"));
	}
	return [...new Set(forms)];
}
