// The test files CI also runs on macOS and Windows runners, in one list: the CLI's unit tests that touch no
// POSIX-only machinery (signals, file modes, /proc, bubblewrap, Unix sockets, sh), and the npm launcher test.
// Linux runs the whole suite (.ci/run); scripts/workflows.test.ts checks this list and the workflow that runs it.
//
//   bun scripts/portable-tests.ts                                    runs this machine's share of the list
//   CHOPIN_PORTABLE_PLATFORM=win32 bun scripts/portable-tests.ts     runs another runner's share here
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

export type PortableOs = "darwin" | "win32";
const BOTH: readonly PortableOs[] = ["darwin", "win32"];
const MACOS: readonly PortableOs[] = ["darwin"];

/**
 * Each file and the runners it runs on. macOS only: the file compares paths as POSIX strings.
 * npm/launcher.test.ts runs on both, in npm's layout for each (`<prefix>\chopin.cmd` through cmd.exe
 * on Windows), its POSIX signal cases skipped there.
 */
export const PORTABLE_TESTS: Readonly<Record<string, readonly PortableOs[]>> = {
	"apps/cli/src/boundary.test.ts": MACOS,
	"apps/cli/src/commands/connect.test.ts": MACOS,
	"apps/cli/src/commands/disconnect.test.ts": BOTH,
	"apps/cli/src/commands/logs.test.ts": BOTH,
	"apps/cli/src/commands/run.test.ts": BOTH,
	"apps/cli/src/commands/service.test.ts": BOTH,
	"apps/cli/src/daemon/reach.test.ts": BOTH,
	"apps/cli/src/daemon/triggers.test.ts": BOTH,
	"apps/cli/src/local/plain-path.test.ts": MACOS,
	"apps/cli/src/local/secrets-expiry.test.ts": BOTH,
	"apps/cli/src/machine/connect-config.test.ts": BOTH,
	"apps/cli/src/planners/launch-env.test.ts": BOTH,
	"apps/cli/src/planners/output-lines.test.ts": BOTH,
	"apps/cli/src/planners/renewal.test.ts": BOTH,
	"apps/cli/src/program/command-line.test.ts": BOTH,
	"apps/cli/src/program/command-tail.test.ts": BOTH,
	"apps/cli/src/program/errors.test.ts": BOTH,
	"apps/cli/src/program/program.test.ts": BOTH,
	"apps/cli/src/program/version.test.ts": BOTH,
	"apps/cli/src/runs/permissions.test.ts": BOTH,
	"apps/cli/src/runs/run-log.test.ts": BOTH,
	"apps/cli/src/server-link/server-api.test.ts": BOTH,
	"apps/cli/src/server-link/server-errors.test.ts": BOTH,
	"apps/cli/src/server-link/server-origin.test.ts": BOTH,
	"apps/cli/src/service/service-path.test.ts": BOTH,
	"npm/launcher-libc.test.ts": BOTH,
	"npm/launcher.test.ts": BOTH,
};

export const ROOT = resolve(import.meta.dir, "..");

/** The files that run on `platform`, in the list's order. */
export function portableTests(platform: string): string[] {
	return Object.entries(PORTABLE_TESTS)
		.filter(([, on]) => (on as readonly string[]).includes(platform))
		.map(([file]) => file);
}

if (import.meta.main) {
	const platform = process.env.CHOPIN_PORTABLE_PLATFORM || process.platform;
	const files = portableTests(platform);
	const missing = files.filter((file) => !existsSync(join(ROOT, file)));
	if (files.length === 0 || missing.length > 0) {
		console.error(
			files.length === 0
				? `portable-tests: no test file is listed for ${platform}`
				: `portable-tests: listed but missing: ${missing.join(", ")}`,
		);
		console.error("hint: edit PORTABLE_TESTS in scripts/portable-tests.ts");
		process.exit(1);
	}
	// `./` makes bun test read each argument as a path, not as a filter on names.
	const child = Bun.spawn(["bun", "test", "--timeout=60000", ...files.map((file) => `./${file}`)], {
		cwd: ROOT,
		stdio: ["inherit", "inherit", "inherit"],
		env: { ...process.env, CHOPIN_TEST_REQUIRE_ALL: "1" },
	});
	process.exit(await child.exited);
}
