// A synchronous append-only log file that rotates by size (chopin.log -> chopin.log.1 ... .N), without worker threads.
import { closeSync, fstatSync, openSync, renameSync, statSync, writeSync } from "node:fs";

export interface RotatingFileOptions {
	path: string;
	/** Rotate before a write would take the file past this many bytes. */
	maxBytes: number;
	/** How many rotated files to keep (path.1 is the newest). */
	keep: number;
	/** Called before the file is first opened, to create its directory. */
	prepare?: () => void;
	mode?: number;
}

/**
 * Several chopin processes (the daemon, a `chopin status`) may append to the same file. Appends
 * are O_APPEND, so lines never interleave mid-line; before rotating, the writer checks that the
 * file at `path` is still the one it has open, and if another process already rotated it,
 * it only reopens. Rotation is best effort: if a rename fails (Windows keeps open files in
 * place) writing carries on in the current file and no line is lost.
 */
export class RotatingFile {
	readonly #options: Required<Omit<RotatingFileOptions, "prepare">> & Pick<RotatingFileOptions, "prepare">;
	#fd: number | undefined;
	#ino = 0;
	#dev = 0;

	constructor(options: RotatingFileOptions) {
		if (options.maxBytes <= 0) throw new Error("maxBytes must be positive");
		if (!Number.isInteger(options.keep) || options.keep < 1) throw new Error("keep must be at least 1");
		this.#options = { mode: 0o600, ...options };
	}

	get path(): string {
		return this.#options.path;
	}

	write(text: string): void {
		const bytes = Buffer.from(text, "utf8");
		this.#open();
		// The size is asked of the file each time, not counted: other processes append to it too.
		const size = fstatSync(this.#fd!).size;
		if (size > 0 && size + bytes.length > this.#options.maxBytes) this.#rotate();
		let offset = 0;
		while (offset < bytes.length) offset += writeSync(this.#fd!, bytes, offset, bytes.length - offset);
	}

	close(): void {
		if (this.#fd !== undefined) closeSync(this.#fd);
		this.#fd = undefined;
	}

	#open(): void {
		if (this.#fd !== undefined) return;
		this.#options.prepare?.();
		this.#fd = openSync(this.#options.path, "a", this.#options.mode);
		const stat = fstatSync(this.#fd);
		this.#ino = stat.ino;
		this.#dev = stat.dev;
	}

	#rotate(): void {
		const { path, keep } = this.#options;
		let current: { ino: number; dev: number } | undefined;
		try {
			current = statSync(path);
		} catch {
			current = undefined; // someone moved it away: reopening makes a fresh file
		}
		if (current && current.ino === this.#ino && current.dev === this.#dev) {
			try {
				for (let n = keep - 1; n >= 1; n--) renameIfPresent(`${path}.${n}`, `${path}.${n + 1}`);
				renameSync(path, `${path}.1`);
			} catch {
				// Could not rotate (a file held open elsewhere on Windows): keep appending.
				return;
			}
		}
		this.close();
		this.#open();
	}
}

function renameIfPresent(from: string, to: string): void {
	try {
		renameSync(from, to);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
	}
}
