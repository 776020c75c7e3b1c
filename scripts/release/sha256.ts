// SHA-256 digests of release files and the SHA256SUMS file that lists them (the format `sha256sum -c` reads).
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

/** The hex SHA-256 of a file, streamed: release binaries are ~100 MB. */
export async function sha256File(path: string): Promise<string> {
	const hash = createHash("sha256");
	for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
	return hash.digest("hex");
}

/** `<hex>  <name>` lines (two spaces: text mode, as sha256sum writes them), sorted by name. */
export function formatSums(sums: ReadonlyMap<string, string>): string {
	return [...sums]
		.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
		.map(([name, hex]) => `${hex}  ${name}\n`)
		.join("");
}

/** Reads SHA256SUMS (either mode marker, ` ` or `*`); a malformed line throws. */
export function parseSums(text: string): Map<string, string> {
	const sums = new Map<string, string>();
	for (const line of text.split("\n")) {
		if (!line.trim()) continue;
		const match = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
		if (!match) throw new Error(`SHA256SUMS: not a checksum line: ${JSON.stringify(line)}`);
		sums.set(match[2]!, match[1]!);
	}
	return sums;
}
