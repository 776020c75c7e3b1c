// What the docs promise, read from the docs themselves so a fuzz test checks answers against the pages people
// read: every error code docs/errors.md names, the agent link's error and refusal codes with their close codes,
// and the control channel's close codes from docs/machines.md.
import { readFileSync } from "node:fs";
import { join } from "node:path";

const docs = join(import.meta.dir, "..", "..", "..", "docs");
const errorsPage = readFileSync(join(docs, "errors.md"), "utf8");
const machinesPage = readFileSync(join(docs, "machines.md"), "utf8");

/** Every `code` in a table row of docs/errors.md. */
export const documentedCodes: ReadonlySet<string> = new Set(
	errorsPage
		.split("\n")
		.filter((line) => line.startsWith("|"))
		.flatMap((line) => [...line.matchAll(/`([a-z][a-z0-9]*(?:-[a-z0-9]+)*)`/g)].map((m) => m[1]!)),
);

/** The agent link's messages after the upgrade: `error`/`refused` code → its close code. */
export const agentLinkCodes: ReadonlyMap<string, { message: string; close: number }> = new Map(
	[...errorsPage.matchAll(/^\| `(error|refused)`\s*\| `([a-z-]+)`\s*\| (\d{4})\s*\|/gm)].map((m) => [
		m[2]!,
		{ message: m[1]!, close: Number(m[3]) },
	]),
);

/** The agent link's close codes that come with no message (1000 detach, 1001 unresponsive, 1012 restart). */
export const agentLinkBareCloses: ReadonlySet<number> = new Set(
	[...errorsPage.matchAll(/^\| \(none\)\s*\|\s*\| (\d{4})\s*\|/gm)].map((m) => Number(m[1])),
);

/** The control channel's close codes (the Close table of docs/machines.md). */
export const machineCloses: ReadonlySet<number> = new Set(
	[...machinesPage.matchAll(/^\| (\d{4}(?:(?:, | \/ )\d{4})?)\s*\|/gm)].flatMap((m) =>
		m[1]!.split(/, | \/ /).map(Number),
	),
);

if (agentLinkCodes.size < 5 || machineCloses.size < 5 || documentedCodes.size < 50)
	throw new Error(
		"docs/errors.md or docs/machines.md changed shape: update test/reliability/support/documented.ts",
	);
