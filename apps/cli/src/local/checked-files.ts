// <state>/checked.json: the SHA-256 of each file (credential.json, machine.json) as it was when this chopin version's
// full zod check last accepted it unchanged, so that `chopin status` can read it again without loading zod.
//
// zod and building the schemas cost `chopin status` several times Bun's own start (docs/install.md § Start-up time).
// A file whose bytes match a digest recorded by this version is one the full check would accept as it is (the check
// is a pure function of the bytes, and it gave back exactly what it was given), so status uses its JSON directly.
// Anything else (no record, another version's record, changed bytes) goes through the full check, which explains what
// is wrong or records the file for next time. Only status trusts the records; every other command checks each file in
// full (and puts a credential others can read back to 0600: status reading it from the record does not look at its
// mode). The record holds no secret: a digest of a file with a 256-bit random token in it says nothing about the
// token. Losing the record, or a race between two writers, costs only speed.
//
// Reads use Bun.mmap, not node:fs: importing node:fs costs more than the rest of a plain status together.
import { CLI_VERSION } from "../program/version";

/** Records kept at most: one per file path, and paths change only when CHOPIN_CONFIG_DIR does. */
export const MAX_CHECKED_FILES = 16;

export interface CheckedStore {
	/** <state>/checked.json. */
	readonly checkedFile: string;
	/** The version whose checks count; default the running chopin's. */
	readonly version?: string;
}

export type CheckedRead =
	| { state: "missing" }
	| { state: "trusted"; json: unknown }
	/** Exists, but must go through the full check (which says what, if anything, is wrong). */
	| { state: "unchecked" };

interface CheckedRecord {
	version: string;
	/** Path → SHA-256 (hex) of the bytes the check accepted. */
	files: Record<string, string>;
}

/** Reads `file` and says whether this version's full check accepted exactly these bytes before. */
export function readChecked(store: CheckedStore, file: string): CheckedRead {
	return checkedReader(store)(file);
}

/** readChecked for several files, reading the record once. */
export function checkedReader(store: CheckedStore): (file: string) => CheckedRead {
	let record: CheckedRecord | undefined | null = null;
	return (file) => {
		record = record === null ? readRecord(store) : record;
		return readOne(record, file);
	};
}

function readOne(record: CheckedRecord | undefined, file: string): CheckedRead {
	let text: string;
	try {
		text = readText(file);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return { state: "missing" };
		// Unreadable, a directory, or empty (which mmap refuses): the full check says what is wrong.
		return { state: "unchecked" };
	}
	if (record?.files[file] !== digest(text)) return { state: "unchecked" };
	try {
		return { state: "trusted", json: JSON.parse(text) };
	} catch {
		return { state: "unchecked" };
	}
}

/** Notes that the full check accepted `text` as the content of `file`. Never throws: a lost record costs only speed. */
export function recordChecked(store: CheckedStore, file: string, text: string): void {
	try {
		const version = store.version ?? CLI_VERSION;
		const current = readRecord(store);
		const sum = digest(text);
		if (current?.files[file] === sum) return;
		// Oldest first (insertion order), so the newest records survive the cap.
		const entries = Object.entries(current?.files ?? {}).filter(([path]) => path !== file);
		entries.push([file, sum]);
		const files = Object.fromEntries(entries.slice(-MAX_CHECKED_FILES));
		const { statSync } = require("node:fs") as typeof import("node:fs");
		const { dirname } = require("node:path") as typeof import("node:path");
		const { writeJsonAtomic } = require("./files") as typeof import("./files");
		// Never creates the state dir: a command that reads config without one has nothing to speed up.
		statSync(dirname(store.checkedFile));
		writeJsonAtomic(store.checkedFile, { version, files } satisfies CheckedRecord, { mode: 0o600 });
	} catch {
		// No state dir, a read-only one, a full disk: the next status runs the full check.
	}
}

/** The record written by this version, or undefined (none, unreadable, another version's, damaged). */
function readRecord(store: CheckedStore): CheckedRecord | undefined {
	let value: unknown;
	try {
		value = JSON.parse(readText(store.checkedFile));
	} catch {
		return undefined;
	}
	if (typeof value !== "object" || value === null) return undefined;
	const { version, files } = value as Partial<CheckedRecord>;
	if (version !== (store.version ?? CLI_VERSION)) return undefined;
	if (typeof files !== "object" || files === null || Array.isArray(files)) return undefined;
	return { version, files };
}

/**
 * A small file's text. Bun.mmap maps it and the bytes are copied out at once; chopin replaces
 * these files by renaming a new one over them, which leaves a mapped file as it was.
 */
function readText(file: string): string {
	if (process.platform === "win32")
		return (require("node:fs") as typeof import("node:fs")).readFileSync(file, "utf8");
	return new TextDecoder().decode(Bun.mmap(file, { shared: false }));
}

function digest(text: string): string {
	return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}
