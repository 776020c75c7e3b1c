// The server's data directory: created private (0700), and home of the generated secret key.
import { randomBytes } from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, parseSecretKey } from "./config";

/** Creates DATA_DIR (and its parents) at mode 0700 when missing; an existing one is left as it is. */
export function ensureDataDir(dir: string): void {
	const created = mkdirSync(dir, { recursive: true, mode: 0o700 });
	// mkdir applies the umask; set the mode exactly on the directory this call made.
	if (created) chmodSync(dir, 0o700);
}

/**
 * The 32-byte key that encrypts secrets at rest. CHOPIN_SECRET_KEY wins; otherwise
 * `<DATA_DIR>/secret.key` is read, or made on first start (mode 0600). The file is written to a
 * temporary name and hard-linked into place, which, unlike a rename, never replaces a key
 * another process made a moment earlier: both then read the same key.
 */
export function loadSecretKey(options: {
	dataDir: string;
	secretKey?: { reveal(): Uint8Array };
}): Uint8Array {
	if (options.secretKey) return options.secretKey.reveal();
	const path = join(options.dataDir, "secret.key");
	const existing = readKeyFile(path);
	if (existing) return existing;

	const temp = join(options.dataDir, `.secret.key.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
	writeFileSync(temp, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
	try {
		linkSync(temp, path);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		// EEXIST: another start won the race, so its key is the key. A file system without hard links gets a rename.
		if (code !== "EEXIST") renameSync(temp, path);
	} finally {
		try {
			unlinkSync(temp);
		} catch {}
	}
	const key = readKeyFile(path);
	if (!key) throw new Error(`secret key file ${path} vanished while it was being created`);
	return key;
}

function readKeyFile(path: string): Uint8Array | undefined {
	let text: string;
	try {
		text = readFileSync(path, "utf8");
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
		throw error;
	}
	const key = parseSecretKey(text);
	if (!key) {
		throw new ConfigError(
			"CHOPIN_SECRET_KEY",
			`${path} does not hold a 32-byte key (64 hex characters or base64).`,
			"Restore the file from a backup, or set CHOPIN_SECRET_KEY; a new key cannot read secrets stored with the old one.",
		);
	}
	return key;
}
