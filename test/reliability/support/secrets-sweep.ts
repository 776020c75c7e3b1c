// Searches captured text, files and SQLite databases for tokens in every form a leak could take: raw, base64 and
// base64url (at each of the three byte alignments a token can have inside a longer encoded blob), URL-encoded
// and JSON-escaped. Any reliability test can call it on its own captures; hits name the token only by its start.
import { Database } from "bun:sqlite";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface Source {
	/** Where the text came from (a file path, "stdout of chopin connect", "answer to POST /x"). */
	name: string;
	text: string;
}

export interface Hit {
	/** The token's prefix and first characters only, never the whole token. */
	token: string;
	form: string;
	source: string;
}

/** A token as a real server or CLI would issue it: chopin_m_/chopin_p_/chopin_r_ and 32 random bytes. */
export function realLookingToken(prefix: "chopin_m_" | "chopin_p_" | "chopin_r_"): string {
	return prefix + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** How a token names itself in a report: enough to tell tokens apart, too little to use. */
export function maskToken(token: string): string {
	const prefix = /^[a-z]+_[a-z]_/.exec(token)?.[0] ?? "";
	return `${prefix}${token.slice(prefix.length, prefix.length + 4)}…`;
}

/**
 * The forms to search for. base64 of a token inside a longer blob depends on where its first byte
 * falls in a 3-byte group, so each alignment gives its own stable middle part.
 */
export function tokenForms(token: string): Map<string, string> {
	const forms = new Map<string, string>([
		["raw", token],
		["url-encoded", encodeURIComponent(token)],
		["form-encoded", new URLSearchParams({ x: token }).toString().slice(2)],
		["json-escaped", JSON.stringify(token).slice(1, -1)],
	]);
	const bytes = Buffer.from(token);
	for (let pad = 0; pad < 3; pad++) {
		const padded = Buffer.concat([Buffer.alloc(pad), bytes]);
		for (const encoding of ["base64", "base64url"] as const) {
			const text = padded.toString(encoding).replace(/=+$/, "");
			// Drop the characters that mix in the padding before or whatever bytes follow.
			const start = Math.ceil((pad * 8) / 6);
			const end = Math.floor(((pad + bytes.length) * 8) / 6);
			forms.set(`${encoding}@${pad}`, text.slice(start, end));
		}
	}
	return forms;
}

/** Every occurrence of every token, in every form, in the sources. */
export function searchSources(tokens: Iterable<string>, sources: Iterable<Source>): Hit[] {
	const list = [...sources];
	// Percent-encoding beyond encodeURIComponent's (`chopin%5Fp%5F...`, or encoded twice) is found by decoding.
	const decoded = list.map((source) => (source.text.includes("%") ? percentDecoded(source.text) : undefined));
	const hits: Hit[] = [];
	for (const token of new Set(tokens)) {
		for (const [form, needle] of tokenForms(token)) {
			for (const source of list) {
				if (source.text.includes(needle)) hits.push({ token: maskToken(token), form, source: source.name });
			}
		}
		list.forEach((source, i) => {
			const text = decoded[i];
			if (text?.includes(token) && !source.text.includes(token))
				hits.push({ token: maskToken(token), form: "percent-encoded", source: source.name });
		});
	}
	return hits;
}

/** Every %XX decoded, up to four times over (a value encoded twice or more). */
function percentDecoded(text: string): string {
	let out = text;
	for (let round = 0; round < 4; round++) {
		const next = out.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) =>
			String.fromCharCode(Number.parseInt(hex, 16)),
		);
		if (next === out) break;
		out = next;
	}
	return out;
}

/** Every regular file under the directories, read as text (latin1, so no byte sequence is lost), except `skip`. */
export function filesUnder(dirs: Iterable<string>, skip: ReadonlySet<string> = new Set()): Source[] {
	const sources: Source[] = [];
	const visit = (path: string) => {
		if (skip.has(path)) return;
		let stat: ReturnType<typeof lstatSync>;
		try {
			stat = lstatSync(path);
		} catch {
			return; // gone while we looked
		}
		if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
		else if (stat.isFile()) sources.push({ name: path, text: readFileSync(path).toString("latin1") });
	};
	for (const dir of dirs) visit(dir);
	return sources;
}

/** Every table's rows of a SQLite file as text, one source per table (opened read-only). */
export function sqliteDump(path: string): Source[] {
	const db = new Database(path, { readonly: true });
	try {
		const tables = db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
			name: string;
		}[];
		return tables.map(({ name }) => {
			const rows = db.query(`SELECT * FROM "${name.replaceAll('"', '""')}"`).all() as Record<
				string,
				unknown
			>[];
			const text = rows
				.map((row) =>
					Object.values(row)
						.map((v) => (v instanceof Uint8Array ? Buffer.from(v).toString("latin1") : String(v)))
						.join("\t"),
				)
				.join("\n");
			return { name: `${path}#${name}`, text };
		});
	} finally {
		db.close();
	}
}

/** The texts of a set of files' SQLite databases: every *.db/*.sqlite file among them, dumped by table. */
export function databasesAmong(sources: Source[]): Source[] {
	return sources.filter((s) => /\.(db|sqlite|sqlite3)$/.test(s.name)).flatMap((s) => sqliteDump(s.name));
}
