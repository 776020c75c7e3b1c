// The address a request comes from, for per-address limits: the peer's, or behind a trusted reverse proxy the
// address that proxy names in its header (TRUSTED_PROXY_HEADER, believed only from TRUSTED_PROXIES).
import { isIP } from "node:net";

export interface ProxyTrust {
	/** The header, lower-cased (e.g. x-forwarded-for). */
	header: string;
	/** Peer addresses allowed to set it, normalised (see normaliseAddress). */
	proxies: ReadonlySet<string>;
}

/** `::ffff:10.0.0.1` and `10.0.0.1` are the same client; IPv6 is compared lower-cased. */
export function normaliseAddress(address: string): string {
	const lower = address.trim().toLowerCase();
	const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
	return mapped ? mapped[1]! : lower;
}

/**
 * The client's address. A header from a peer that is not a trusted proxy is ignored (anyone can send one). From a
 * trusted proxy, the header is read right to left, skipping the trusted proxies themselves (a chain of them), so the
 * first address no trusted proxy could have written is the client's; entries a client wrote further left never count.
 */
export function clientAddress(
	headers: Headers,
	peer: string | undefined,
	trust: ProxyTrust | undefined,
): string {
	const direct = peer === undefined ? "unknown" : normaliseAddress(peer);
	if (!trust?.proxies.has(direct)) return direct;
	const value = headers.get(trust.header);
	if (!value) return direct;
	const hops = value
		.split(",")
		.map((hop) => normaliseAddress(stripPort(hop.trim())))
		.filter((hop) => hop !== "");
	for (let i = hops.length - 1; i >= 0; i--) {
		const hop = hops[i]!;
		if (isIP(hop) === 0) return direct;
		if (!trust.proxies.has(hop)) return hop;
	}
	return hops[0] ?? direct;
}

/** `1.2.3.4:5678` and `[::1]:5678` as some proxies write them, to the bare address. */
function stripPort(hop: string): string {
	const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(hop);
	if (bracketed) return bracketed[1]!;
	const v4 = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(hop);
	return v4 ? v4[1]! : hop;
}
