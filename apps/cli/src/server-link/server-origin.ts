// Checks --server: an https origin, or http only on loopback, so a machine token never crosses a network in clear.
import { z } from "zod";
import { CliError } from "../program/errors";

export type ServerOriginResult =
	| { ok: true; origin: string }
	| { ok: false; code: "server-url-invalid" | "server-url-insecure"; message: string; hint: string };

const invalid = (message: string, hint: string): ServerOriginResult => ({
	ok: false,
	code: "server-url-invalid",
	message,
	hint,
});

/**
 * The origin (`https://host[:port]`, lower-case, default port dropped) of a server URL, or why
 * it cannot be one. A single trailing slash is accepted because people paste it.
 */
export function checkServerOrigin(input: string): ServerOriginResult {
	const text = input.trim();
	if (text === "")
		return invalid(
			"The server URL is empty.",
			"Pass the server's origin, for example https://chopin.example.",
		);
	if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
		return invalid(
			`The server URL ${JSON.stringify(text)} has no scheme.`,
			`Include it: --server https://${text.replace(/^\/+/, "")}`,
		);
	}
	let url: URL;
	try {
		url = new URL(text);
	} catch {
		return invalid(
			`The server URL ${JSON.stringify(text)} is not a valid URL.`,
			"Pass an origin such as https://chopin.example.",
		);
	}
	if (url.protocol !== "https:" && url.protocol !== "http:") {
		return invalid(
			`The server URL must use https:, not ${url.protocol}`,
			"Pass an origin such as https://chopin.example.",
		);
	}
	if (url.username !== "" || url.password !== "") {
		return invalid(
			"The server URL must not contain a user name or password.",
			"Pass only the origin; chopin pairs the machine and keeps its own credential.",
		);
	}
	if (
		url.pathname !== "/" ||
		url.search !== "" ||
		url.hash !== "" ||
		text.endsWith("?") ||
		text.endsWith("#")
	) {
		return invalid(
			`The server URL must be an origin without a path, query or fragment; got ${JSON.stringify(text)}.`,
			`Pass ${url.origin}`,
		);
	}
	if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
		return {
			ok: false,
			code: "server-url-insecure",
			message: `The server URL uses http:// for ${url.hostname}, which is not this machine.`,
			hint: `Use https://${url.host}; plain http is only allowed on loopback (localhost, 127.0.0.0/8, [::1]).`,
		};
	}
	return { ok: true, origin: url.origin };
}

/** Throws the CliError for a bad server URL, or returns its origin. */
export function parseServerOrigin(input: string): string {
	const result = checkServerOrigin(input);
	if (!result.ok) throw new CliError(result.code, result.message, result.hint);
	return result.origin;
}

/**
 * Loopback only, judged on the URL parser's normalised hostname (so 127.1 and 0x7f.0.0.1 have
 * already become 127.0.0.1). Names other than `localhost` itself are not trusted: nothing
 * guarantees that `*.localhost` resolves to this machine.
 */
export function isLoopbackHost(hostname: string): boolean {
	const host = hostname.toLowerCase();
	if (host === "localhost" || host === "[::1]") return true;
	const ipv4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
	if (ipv4) return Number(ipv4[1]) === 127 && ipv4.slice(1).every((octet) => Number(octet) <= 255);
	// An IPv4-mapped IPv6 address, which the URL parser writes in hex: [::ffff:7f00:1].
	const mapped = /^\[::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}\]$/.exec(host);
	if (mapped) return Number.parseInt(mapped[1]!, 16) >> 8 === 127;
	return false;
}

/** `--server` in a zod schema: transforms to the origin, or reports the coded issue. */
export const serverOriginSchema = z.string().transform((value, ctx) => {
	const result = checkServerOrigin(value);
	if (result.ok) return result.origin;
	ctx.addIssue({ code: "custom", message: result.message, params: { code: result.code, hint: result.hint } });
	return z.NEVER;
});

/** A stored server origin (config, credential): already checked once, checked again on load. */
export const storedOriginSchema = z.string().refine((value) => {
	const result = checkServerOrigin(value);
	return result.ok && result.origin === value;
}, "must be an https origin, or http on loopback");
