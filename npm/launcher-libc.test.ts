// The npm launcher's libc check, asked of the shim (npm/cli/bin/chopin) as it is, under Node: how it tells musl, which
// it refuses plainly. Apart from npm/launcher.test.ts, which installs the launcher, because it needs no install.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { run } from "../scripts/testing/compiled-cli";

const node = Bun.which("node");
const REQUIRE_ALL = process.env.CHOPIN_TEST_REQUIRE_ALL === "1";
if (!node && !REQUIRE_ALL)
	console.warn("note: Node.js is not installed; the launcher's libc tests are skipped.");

describe.skipIf(!node && !REQUIRE_ALL)(
	"the launcher's libc check (how it tells musl, which it refuses plainly)",
	() => {
		const shim = join(import.meta.dir, "cli", "bin", "chopin");

		test("this glibc machine is glibc to it, asked under Node as the launcher asks", async () => {
			const code = `const { thisLibc } = require(${JSON.stringify(shim)}); console.log(thisLibc() ?? "unknown")`;
			const result = await run([node!, "-e", code]);
			expect(result.stdout).toBe(process.platform === "linux" ? "glibc\n" : "unknown\n");
		});

		test("musl is told by Node's report (no glibc version, musl's loader loaded) or by ldd", () => {
			const { libcFamily } = require(shim) as {
				libcFamily(report: unknown, ldd: string | undefined): string | undefined;
			};
			const musl = { header: {}, sharedObjects: ["/lib/ld-musl-x86_64.so.1", "/lib/libc.musl-x86_64.so.1"] };
			expect(libcFamily(musl, undefined)).toBe("musl");
			expect(libcFamily({ header: { glibcVersionRuntime: "2.36" }, sharedObjects: [] }, undefined)).toBe(
				"glibc",
			);
			expect(libcFamily(undefined, '#!/bin/sh\nexec /lib/ld-musl-x86_64.so.1 --list "$@"\n')).toBe("musl");
			expect(libcFamily(undefined, "# This file is part of the GNU C Library.\n")).toBe("glibc");
			expect(libcFamily(undefined, undefined)).toBeUndefined();
		});
	},
);
