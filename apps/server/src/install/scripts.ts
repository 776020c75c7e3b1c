// The installers (installers/install.sh, install.ps1) as this server hands them out: with its CLI_DOWNLOAD_URL baked in.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export type InstallerName = "install.sh" | "install.ps1";

const INSTALLERS_DIR = join(import.meta.dir, "..", "..", "..", "..", "installers");

/** The one line of each script that holds its download base, and how to write a value there. */
const BASE_LINE: Record<InstallerName, { pattern: RegExp; line: (url: string) => string }> = {
	"install.sh": {
		pattern: /^default_download_url='[^'\n]*'$/m,
		line: (url) => `default_download_url='${url.replaceAll("'", `'\\''`)}'`,
	},
	"install.ps1": {
		pattern: /^\$ChopinDefaultDownloadUrl = '[^'\n]*'$/m,
		line: (url) => `$ChopinDefaultDownloadUrl = '${url.replaceAll("'", "''")}'`,
	},
};

export function readInstaller(name: InstallerName): string {
	return readFileSync(join(INSTALLERS_DIR, name), "utf8");
}

/**
 * The script with `url` as its default download base. Throws when the script does not have
 * exactly one base line: a script edited that way must fail the server's start, not a user's install.
 */
export function withDownloadUrl(name: InstallerName, script: string, url: string): string {
	const { pattern, line } = BASE_LINE[name];
	const count = script.match(new RegExp(pattern.source, "gm"))?.length ?? 0;
	if (count !== 1)
		throw new Error(`installers/${name} must have exactly one download base line (found ${count})`);
	// A function replacement, so `$` in the value is never read as a replacement pattern.
	return script.replace(pattern, () => line(url));
}
