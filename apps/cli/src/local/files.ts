// Atomic file writes (never a half-written credential or config) and zod-checked JSON reads.

import * as nodeFs from "node:fs";
import { basename, dirname, join } from "node:path";
import type { z } from "zod";
import { CliError, type CliErrorCode } from "../program/errors";
import { isAlive } from "./process-liveness";

/** The file operations an atomic write uses; a parameter so a test can make one fail. */
export type FileOps = Pick<
	typeof nodeFs,
	"openSync" | "writeSync" | "fsyncSync" | "fchmodSync" | "closeSync" | "renameSync" | "unlinkSync"
>;

export interface AtomicWriteOptions {
	/** The final file's mode; the temp file is created with it, so the content is never readable wider. */
	mode?: number;
	fs?: FileOps;
}

const TEMP_SUFFIX = ".tmp";

/**
 * Writes a file so that readers see either the old content or the new, never a mix: a temp
 * file in the same directory (same file system, so rename is atomic) created with the final
 * mode, written, fsynced, then renamed over the target. A failure removes the temp file and
 * leaves the old one as it was.
 */
export function writeFileAtomic(
	path: string,
	data: string | Uint8Array,
	options: AtomicWriteOptions = {},
): void {
	const fs = options.fs ?? nodeFs;
	const mode = options.mode ?? 0o600;
	const dir = dirname(path);
	sweepOrphans(dir, basename(path));
	// Web Crypto, not node:crypto's randomBytes: importing node:crypto costs every command ~4 ms.
	const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString("hex");
	const temp = join(dir, `.${basename(path)}.${process.pid}.${nonce}${TEMP_SUFFIX}`);
	// "wx": never follow or reuse something already at the temp name.
	const fd = fs.openSync(temp, "wx", mode);
	let renamed = false;
	try {
		try {
			// The umask may have narrowed or (rarely) the mode argument been ignored: set it exactly.
			if (process.platform !== "win32") fs.fchmodSync(fd, mode);
			const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
			let offset = 0;
			while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
			fs.fsyncSync(fd);
		} finally {
			fs.closeSync(fd);
		}
		fs.renameSync(temp, path);
		renamed = true;
	} finally {
		if (!renamed) {
			try {
				fs.unlinkSync(temp);
			} catch {
				// Already gone: nothing to clean up.
			}
		}
	}
	syncDirectory(dir);
}

/** Writes a value as pretty JSON (with a final newline) atomically. */
export function writeJsonAtomic(path: string, value: unknown, options: AtomicWriteOptions = {}): void {
	writeFileAtomic(path, `${JSON.stringify(value, null, "\t")}\n`, options);
}

/**
 * Reads a JSON file and checks it with a schema. A missing file is `undefined`; a file that is
 * not JSON or does not match is a CliError with the given code, naming the file. `onAccepted`
 * hears the text of a file the schema accepted unchanged (no default filled in, nothing
 * trimmed): checked-files.ts records it.
 */
export function readJsonFile<T extends z.ZodType>(
	path: string,
	schema: T,
	error: { code: CliErrorCode; what: string },
	options: { onAccepted?: (text: string) => void } = {},
): z.infer<T> | undefined {
	let text: string;
	try {
		text = nodeFs.readFileSync(path, "utf8");
	} catch (cause) {
		if ((cause as NodeJS.ErrnoException).code === "ENOENT") return undefined;
		throw cause;
	}
	let json: unknown;
	try {
		json = JSON.parse(text);
	} catch (cause) {
		throw new CliError(error.code, `The ${error.what} at ${path} is not valid JSON.`, fixHint(path), {
			cause,
		});
	}
	const parsed = schema.safeParse(json);
	if (!parsed.success) {
		const issue = parsed.error.issues[0];
		const where = issue && issue.path.length > 0 ? ` (${issue.path.join(".")}: ${issue.message})` : "";
		throw new CliError(
			error.code,
			`The ${error.what} at ${path} is not in the expected form${where}.`,
			fixHint(path),
			{
				cause: parsed.error,
			},
		);
	}
	if (options.onAccepted && Bun.deepEquals(parsed.data, json, true)) options.onAccepted(text);
	return parsed.data;
}

/** Deletes a file; a file that is already gone is fine. Returns whether one was deleted. */
export function removeFile(path: string): boolean {
	try {
		nodeFs.unlinkSync(path);
		return true;
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
		throw error;
	}
}

function fixHint(path: string): string {
	return `Fix the file by hand, or delete ${path} and run the command that wrote it again.`;
}

/** Makes the rename itself durable where the platform allows fsync on a directory. */
function syncDirectory(dir: string): void {
	if (process.platform === "win32") return;
	let fd: number | undefined;
	try {
		fd = nodeFs.openSync(dir, "r");
		nodeFs.fsyncSync(fd);
	} catch {
		// Some file systems refuse fsync on a directory; the rename has still happened.
	} finally {
		if (fd !== undefined) nodeFs.closeSync(fd);
	}
}

/**
 * Removes temp files a crashed writer left beside the target: `.name.<pid>.<random>.tmp` whose
 * pid is no longer alive. A live writer's temp file is left alone.
 */
function sweepOrphans(dir: string, name: string): void {
	let entries: string[];
	try {
		entries = nodeFs.readdirSync(dir);
	} catch {
		return;
	}
	const prefix = `.${name}.`;
	for (const entry of entries) {
		if (!entry.startsWith(prefix) || !entry.endsWith(TEMP_SUFFIX)) continue;
		const pid = Number(entry.slice(prefix.length).split(".")[0]);
		if (pid === process.pid || isAlive({ pid })) continue;
		try {
			nodeFs.unlinkSync(join(dir, entry));
		} catch {
			// Another process swept it first.
		}
	}
}
