// The files the service code touches (the definitions, the stop request) and the file questions command resolution
// asks, behind one seam: the real file system here, and in tests of the Windows branch one that maps C:\ to a temp dir.
import { mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { removeFile, writeFileAtomic } from "../local/files";
import type { Platform } from "../local/paths";
import { type FileProbe, hostFiles } from "./resolve-commands";

export interface ServiceFiles extends FileProbe {
	/** Writes a file atomically with its mode, creating its directory (with the usual mode) when missing. */
	write(file: string, content: string | Uint8Array, mode: number): void;
	/** The file's bytes, or undefined when there is none. */
	read(file: string): Uint8Array | undefined;
	/** Removes a file; one already gone is fine. Whether one was removed. */
	remove(file: string): boolean;
}

/**
 * This computer's file system. Directories made here (~/.config/systemd/user, ~/Library/LaunchAgents) are the
 * system's, not chopin's private ones, so they get the usual mode; chopin's state dir is made 0700 before.
 */
export function hostServiceFiles(platform: Platform): ServiceFiles {
	return {
		...hostFiles(platform),
		write(file, content, mode) {
			mkdirSync(dirname(file), { recursive: true });
			writeFileAtomic(file, content, { mode });
		},
		read(file) {
			try {
				return readFileSync(file);
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
				throw error;
			}
		},
		remove: (file) => removeFile(file),
	};
}
