// A token file a backend reads (CHOPIN_PLANNER_TOKEN_FILE, CHOPIN_GITHUB_TOKEN_FILE): mode 0600, replaced atomically, removed when done.
import { dirname } from "node:path";
import { removeFile, writeFileAtomic } from "../local/files";
import { ensurePrivateDir } from "../local/paths";

export class TokenFile {
	constructor(readonly path: string) {}

	/** Readers see the old token or the new one, never half of either (temp file + rename). */
	write(token: string): void {
		ensurePrivateDir(dirname(this.path));
		// No trailing newline: a backend that reads the file without trimming still gets the exact token.
		writeFileAtomic(this.path, token, { mode: 0o600 });
	}

	/** Gone is fine: deleting twice, or a file never written, changes nothing. */
	remove(): void {
		removeFile(this.path);
	}
}
