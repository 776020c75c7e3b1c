// The installers' error codes as docs/errors.md lists them ("Installers"), for the tests that hold each script to them.
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ERRORS_MD = join(import.meta.dir, "..", "..", "docs", "errors.md");

/** The codes the table gives to `script` (rows for `both` included), sorted. */
export function documentedCodes(script: "install.sh" | "install.ps1"): string[] {
	const text = readFileSync(ERRORS_MD, "utf8");
	const start = text.indexOf("\n## Installers\n");
	if (start < 0) throw new Error("docs/errors.md has no Installers section");
	const end = text.indexOf("\n## ", start + 1);
	const section = text.slice(start, end < 0 ? undefined : end);
	const codes: string[] = [];
	for (const match of section.matchAll(/^\| `([a-z-]+)` +\| ([a-z.0-9]+) +\|/gm)) {
		if (match[2] === "both" || match[2] === script) codes.push(match[1]!);
	}
	return codes.sort();
}
