// kill -9 of a process rewriting a Planner token file with the daemon's own TokenFile.write, as fast as it can and
// with 256 KiB tokens, so a kill lands mid-write: a reader looking at every moment sees one whole token, mode 0600,
// and a killed write's temp file goes with the next write.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { countsFor } from "./support/counts";

const counts = countsFor("kill-token-file");
const TOKEN_FILE_MODULE = join(
	import.meta.dir,
	"..",
	"..",
	"apps",
	"cli",
	"src",
	"planners",
	"token-file.ts",
);
/** Padding of the written tokens (bytes): a torn write of this much would be seen. */
const TOKEN_PAD = 256 * 1024;
const root = mkdtempSync(join(tmpdir(), "chopin-kill-token-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the Planner token file, its writer killed with SIGKILL mid-rewrite", () => {
	test(
		"every moment a reader looks, the file holds one whole token (old or new), mode 0600; leftovers of a killed write go with the next",
		counts.guard(async () => {
			const dir = root;
			const file = join(dir, "tokens", "planner-token");
			// The daemon's renewal rewrites the file with TokenFile.write; here a process does nothing else, as fast as
			// it can, so a kill lands mid-write. Long tokens widen the window a torn write would show in.
			const writer = `
				import { TokenFile } from ${JSON.stringify(TOKEN_FILE_MODULE)};
				const file = new TokenFile(process.env.TOKEN_PATH);
				for (let n = 0; ; n++) file.write("chopin_p_" + String(n).padStart(12, "0") + "x".repeat(${TOKEN_PAD}));
			`;
			const whole = new RegExp(`^chopin_p_\\d{12}x{${TOKEN_PAD}}$`);
			let reads = 0;
			for (let i = 0; i < 6; i++) {
				const child = Bun.spawn([process.execPath, "-e", writer], {
					env: { PATH: process.env.PATH ?? "", TOKEN_PATH: file },
					stdout: "ignore",
					stderr: "pipe",
				});
				const deadline = Date.now() + 20 + Math.floor(Math.random() * 200);
				// Read at every moment until the kill, and once more after it.
				for (let killed = false; ; ) {
					let text: string | undefined;
					try {
						text = readFileSync(file, "utf8");
					} catch (error) {
						if ((error as NodeJS.ErrnoException).code !== "ENOENT" || i > 0) throw error;
					}
					if (text !== undefined) {
						reads += 1;
						expect(text).toMatch(whole);
					}
					if (killed) break;
					if (Date.now() > deadline && existsSync(file)) {
						child.kill("SIGKILL");
						await child.exited;
						counts.fault();
						killed = true;
					} else await Bun.sleep(0);
				}
				expect(statSync(file).mode & 0o777).toBe(0o600);
			}
			// A write killed between its temp file and the rename leaves the temp file (0600, a token inside): the
			// next write sweeps it.
			for (const name of readdirSync(dirname(file))) {
				expect(statSync(join(dirname(file), name)).mode & 0o777).toBe(0o600);
			}
			const { TokenFile } = await import(TOKEN_FILE_MODULE);
			new TokenFile(file).write("chopin_p_last");
			expect(readdirSync(dirname(file))).toEqual(["planner-token"]);
			counts.add("token file reads", reads);
		}),
		60_000,
	);
});
