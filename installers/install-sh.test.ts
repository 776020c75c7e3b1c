// install.sh run by a real /bin/sh against a release host on loopback serving the compiled chopin, without cosign
// (install-sh-signature.test.ts has it on PATH).
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import {
	chmodSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256File } from "../scripts/release/sha256";
import { COMPILE_TIMEOUT_MS, type CompiledCli, compileCli, run } from "../scripts/testing/compiled-cli";
import { IDENTITY, ISSUER, PATH_WITHOUT_COSIGN } from "./testing/cosign";
import { documentedCodes } from "./testing/error-codes";
import { type ReleaseServer, startReleaseServer } from "./testing/release-server";
import { shDecisions, URL_CASES } from "./testing/url-rule";

const SCRIPT = join(import.meta.dir, "install.sh");
const REQUIRE_ALL = process.env.CHOPIN_TEST_REQUIRE_ALL === "1";
/** Each install downloads and hashes ~110 MB, several times in some tests: slow on a busy machine. */
const INSTALL_TIMEOUT_MS = 60_000;

let cli: CompiledCli;
let releases: ReleaseServer;
beforeAll(async () => {
	cli = await compileCli();
	releases = startReleaseServer(cli.dir, cli.version);
}, COMPILE_TIMEOUT_MS);
afterAll(async () => {
	await releases?.close();
	cli?.remove();
});

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
	releases.reset();
});
function tempDir(): string {
	const dir = mkdtempSync(join(tmpdir(), "chopin-install-sh-"));
	dirs.push(dir);
	return dir;
}

/** Runs install.sh with only the environment given (plus the machine's PATH, without cosign, unless one is given). */
function install(env: Record<string, string>, options: { piped?: boolean } = {}) {
	const full = { PATH: PATH_WITHOUT_COSIGN, ...env };
	// `curl ... | sh` hands the script over stdin; both ways must behave the same.
	return options.piped
		? run(["/bin/sh"], { env: full, stdin: readFileSync(SCRIPT, "utf8") })
		: run(["/bin/sh", SCRIPT], { env: full });
}

describe("install.sh", () => {
	test(
		"installs the checked binary into CHOPIN_INSTALL_DIR, and says how to put it on PATH",
		async () => {
			const root = tempDir();
			const dir = join(root, "tools", "bin");
			const result = await install({
				HOME: root,
				CHOPIN_INSTALL_DIR: dir,
				CHOPIN_DOWNLOAD_URL: releases.downloadUrl,
			});
			expect(result.code).toBe(0);
			expect(result.stdout).toBe("");
			expect(result.stderr).toContain(`chopin ${cli.version} installed at ${dir}/chopin`);
			expect(result.stderr).toContain(`${dir} is not on your PATH`);
			expect(result.stderr).toContain(`export PATH="${dir}:$PATH"`);
			// No cosign here: one line says how to check the signature by hand.
			expect(result.stderr).toContain(
				`note: cosign is not installed, so the signature on SHA256SUMS was not checked (the SHA-256 was). To check it: gh attestation verify ${dir}/chopin --repo chopin-app/chopin, or cosign verify-blob --bundle SHA256SUMS.sigstore.json --certificate-identity ${IDENTITY}${cli.version} --certificate-oidc-issuer ${ISSUER} SHA256SUMS with both files from ${releases.origin}/releases/latest/download\n`,
			);
			// No version asked for: the latest release, in GitHub's layout.
			expect(releases.requests).toEqual([
				`/releases/latest/download/${cli.target.asset}`,
				"/releases/latest/download/SHA256SUMS",
			]);
			expect(readdirSync(dir)).toEqual(["chopin"]);
			expect(statSync(join(dir, "chopin")).mode & 0o777).toBe(0o755);
			expect(await sha256File(join(dir, "chopin"))).toBe(await sha256File(cli.binary));
			const installed = await run([join(dir, "chopin"), "--version"]);
			expect(installed.stdout).toBe(`${cli.version}\n`);
		},
		INSTALL_TIMEOUT_MS,
	);

	test(
		"defaults to $HOME/.chopin/bin, where chopin then reports the `script` install method",
		async () => {
			const root = tempDir();
			const home = join(root, "home");
			const bin = join(home, ".chopin", "bin");
			const result = await install(
				{ HOME: home, CHOPIN_DOWNLOAD_URL: releases.downloadUrl, PATH: `${bin}:${process.env.PATH}` },
				{ piped: true },
			);
			expect(result.code).toBe(0);
			expect(result.stderr).toContain(`installed at ${bin}/chopin`);
			// Already on PATH: no advice.
			expect(result.stderr).not.toContain("not on your PATH");
			const status = await run([join(bin, "chopin"), "status", "--json"], {
				env: { HOME: home, CHOPIN_STATE_DIR: join(root, "state"), CHOPIN_CONFIG_DIR: join(root, "config") },
			});
			expect(status.code).toBe(3);
			expect(JSON.parse(status.stdout).installMethod).toBe("script");
		},
		INSTALL_TIMEOUT_MS,
	);

	test(
		"CHOPIN_VERSION picks the release's URL path, with or without its v",
		async () => {
			for (const asked of [cli.version, `v${cli.version}`]) {
				const root = tempDir();
				const result = await install({
					HOME: root,
					CHOPIN_INSTALL_DIR: join(root, "bin"),
					CHOPIN_DOWNLOAD_URL: releases.downloadUrl,
					CHOPIN_VERSION: asked,
				});
				expect(result.code).toBe(0);
				expect(releases.requests.splice(0)).toEqual([
					`/releases/download/v${cli.version}/${cli.target.asset}`,
					`/releases/download/v${cli.version}/SHA256SUMS`,
				]);
			}
		},
		INSTALL_TIMEOUT_MS,
	);

	test(
		"a version the host does not have fails and installs nothing",
		async () => {
			const root = tempDir();
			const dir = join(root, "bin");
			const result = await install({
				HOME: root,
				CHOPIN_INSTALL_DIR: dir,
				CHOPIN_DOWNLOAD_URL: releases.downloadUrl,
				CHOPIN_VERSION: "9.9.9",
			});
			expect(result.code).toBe(1);
			expect(result.stderr).toContain(
				`chopin install: error [download-failed]: could not download ${releases.origin}/releases/download/v9.9.9/${cli.target.asset}.`,
			);
			expect(() => readdirSync(dir)).toThrow();
		},
		INSTALL_TIMEOUT_MS,
	);

	test(
		"a wrong checksum is refused and an installed binary stays exactly as it was",
		async () => {
			const root = tempDir();
			const dir = join(root, "bin");
			mkdirSync(dir);
			const existing = join(dir, "chopin");
			writeFileSync(existing, "#!/bin/sh\necho 0.0.1\n", { mode: 0o755 });
			const before = statSync(existing);
			releases.files.set("SHA256SUMS", `${"0".repeat(64)}  ${cli.target.asset}\n`);
			const result = await install({
				HOME: root,
				CHOPIN_INSTALL_DIR: dir,
				CHOPIN_DOWNLOAD_URL: releases.downloadUrl,
			});
			expect(result.code).toBe(1);
			expect(result.stderr).toContain(
				`chopin install: error [checksum-mismatch]: ${cli.target.asset} does not match its SHA-256 in SHA256SUMS`,
			);
			expect(result.stderr).toContain("nothing was installed");
			expect(readFileSync(existing, "utf8")).toBe("#!/bin/sh\necho 0.0.1\n");
			const after = statSync(existing);
			expect([after.ino, after.mtimeMs, after.mode]).toEqual([before.ino, before.mtimeMs, before.mode]);
			expect(readdirSync(dir)).toEqual(["chopin"]);
		},
		INSTALL_TIMEOUT_MS,
	);

	test(
		"SHA256SUMS without this machine's binary is refused",
		async () => {
			const root = tempDir();
			releases.files.set("SHA256SUMS", `${"0".repeat(64)}  chopin-plan9-x64\n`);
			const result = await install({
				HOME: root,
				CHOPIN_INSTALL_DIR: join(root, "bin"),
				CHOPIN_DOWNLOAD_URL: releases.downloadUrl,
			});
			expect(result.code).toBe(1);
			expect(result.stderr).toContain(
				`chopin install: error [checksum-missing]: ${releases.origin}/releases/latest/download/SHA256SUMS lists no ${cli.target.asset}.`,
			);
			expect(() => readdirSync(join(root, "bin"))).toThrow();
		},
		INSTALL_TIMEOUT_MS,
	);

	test(
		"rerunning is idempotent, and replaces an older binary in place",
		async () => {
			const root = tempDir();
			const dir = join(root, "bin");
			const env = { HOME: root, CHOPIN_INSTALL_DIR: dir, CHOPIN_DOWNLOAD_URL: releases.downloadUrl };
			expect((await install(env)).code).toBe(0);
			const first = statSync(join(dir, "chopin"));
			const again = await install(env);
			expect(again.code).toBe(0);
			expect(again.stderr).toContain(`chopin ${cli.version} is already installed at ${dir}/chopin`);
			const second = statSync(join(dir, "chopin"));
			expect([second.ino, second.mtimeMs]).toEqual([first.ino, first.mtimeMs]);

			// An older chopin there (as before an upgrade) is replaced by a rename, leaving no temp file.
			writeFileSync(join(dir, "chopin"), "#!/bin/sh\necho 0.0.1\n");
			const upgrade = await install(env);
			expect(upgrade.code).toBe(0);
			expect(upgrade.stderr).toContain(`chopin ${cli.version} installed at ${dir}/chopin`);
			expect(readdirSync(dir)).toEqual(["chopin"]);
			expect(await sha256File(join(dir, "chopin"))).toBe(await sha256File(cli.binary));
		},
		INSTALL_TIMEOUT_MS,
	);

	test(
		"a base without {version}: used as is, and CHOPIN_VERSION is refused with it",
		async () => {
			const root = tempDir();
			const base = `${releases.origin}/mirror/`;
			const plain = await install({
				HOME: root,
				CHOPIN_INSTALL_DIR: join(root, "a"),
				CHOPIN_DOWNLOAD_URL: base,
			});
			expect(plain.code).toBe(0);
			expect(releases.requests.splice(0)).toEqual([`/mirror/${cli.target.asset}`, "/mirror/SHA256SUMS"]);
			const pinned = await install({
				HOME: root,
				CHOPIN_INSTALL_DIR: join(root, "b"),
				CHOPIN_DOWNLOAD_URL: base,
				CHOPIN_VERSION: "1.2.3",
			});
			expect(pinned.code).toBe(1);
			expect(pinned.stderr).toContain("CHOPIN_DOWNLOAD_URL has no {version} in it");
			expect(releases.requests).toEqual([]);
		},
		INSTALL_TIMEOUT_MS,
	);

	test(
		"refuses plain http to anything but this machine, the two URL tricks of issue 18 too, and bad versions, before downloading",
		async () => {
			const root = tempDir();
			for (const [base, url] of [
				["http://downloads.example/v{version}", "http://downloads.example/latest"],
				// Starts like this machine, is another host.
				["http://127.0.0.1.nip.invalid/v{version}", "http://127.0.0.1.nip.invalid/latest"],
				// Userinfo: curl would connect to evil.invalid.
				["http://localhost:x@evil.invalid/v{version}", "http://localhost:x@evil.invalid/latest"],
				// Even when the host after the @ is this machine's own release host.
				[`http://localhost:x@${releases.origin.slice("http://".length)}/mirror`, undefined],
			] as const) {
				const refused = await install({
					HOME: root,
					CHOPIN_INSTALL_DIR: join(root, "bin"),
					CHOPIN_DOWNLOAD_URL: base,
				});
				expect(refused.code).toBe(1);
				expect(refused.stderr).toContain(
					`chopin install: error [url-refused]: refusing to download from ${url ?? base}: only https:// URLs, or plain http:// to this machine (localhost, 127.x.x.x or [::1]), are allowed.\nchopin install: hint: Use an https:// URL in CHOPIN_DOWNLOAD_URL.\n`,
				);
			}
			const bad = await install({ HOME: root, CHOPIN_VERSION: "1.2.3; rm -rf /" });
			expect(bad.code).toBe(1);
			expect(bad.stderr).toContain(
				"chopin install: error [version-invalid]: CHOPIN_VERSION=1.2.3; rm -rf / is not a version.",
			);
			expect(releases.requests).toEqual([]);
			expect(() => readdirSync(join(root, "bin"))).toThrow();
		},
		INSTALL_TIMEOUT_MS,
	);

	test(
		"plain http to this machine by name, in capitals, with a port, and a relative CHOPIN_INSTALL_DIR made absolute",
		async () => {
			const root = tempDir();
			const port = new URL(releases.origin).port;
			const result = await run(["/bin/sh", SCRIPT], {
				cwd: root,
				env: {
					PATH: PATH_WITHOUT_COSIGN,
					HOME: root,
					CHOPIN_INSTALL_DIR: "tools/bin",
					CHOPIN_DOWNLOAD_URL: `HTTP://LocalHost:${port}/mirror`,
				},
			});
			expect(result.stderr).toContain(
				`note: CHOPIN_INSTALL_DIR=tools/bin is relative: installing into ${root}/tools/bin\n`,
			);
			expect(result.stderr).toContain(`installed at ${root}/tools/bin/chopin`);
			expect(result.code).toBe(0);
			expect(releases.requests).toEqual([`/mirror/${cli.target.asset}`, "/mirror/SHA256SUMS"]);
		},
		INSTALL_TIMEOUT_MS,
	);

	test("decides every URL of the table as install.ps1 does, in every sh here (dash, bash, busybox)", async () => {
		const urls = URL_CASES.map(([url]) => url);
		const expected = URL_CASES.map(([, allowed]) => allowed);
		expect(await shDecisions(urls)).toEqual(expected);
		// macOS's sh is bash; Alpine's is busybox. Pattern matching must not depend on the shell or its locale.
		const shells = [["bash"], ["bash", "--posix"], ["busybox", "sh"]].filter(([program]) =>
			Bun.which(program!),
		);
		for (const shell of shells) {
			for (const locale of ["C", "C.UTF-8"]) {
				expect({ shell, locale, decisions: await shDecisions(urls, shell, { LC_ALL: locale }) }).toEqual({
					shell,
					locale,
					decisions: expected,
				});
			}
		}
	});

	test(
		"a download that does not run here is not installed",
		async () => {
			const root = tempDir();
			const release = join(root, "release");
			mkdirSync(release);
			const broken = join(release, cli.target.asset);
			writeFileSync(broken, "#!/bin/sh\nexit 1\n");
			chmodSync(broken, 0o755);
			writeFileSync(join(release, "SHA256SUMS"), `${await sha256File(broken)}  ${cli.target.asset}\n`);
			await using host = startReleaseServer(release, "0.0.0");
			const dir = join(root, "bin");
			const result = await install({
				HOME: root,
				CHOPIN_INSTALL_DIR: dir,
				CHOPIN_DOWNLOAD_URL: host.downloadUrl,
			});
			expect(result.code).toBe(1);
			expect(result.stderr).toContain(
				"chopin install: error [binary-does-not-run]: the downloaded chopin does not run on this system; nothing was installed.",
			);
			expect(() => readdirSync(dir)).toThrow();
		},
		INSTALL_TIMEOUT_MS,
	);

	test(
		"works with wget and shasum when curl and sha256sum are missing",
		async () => {
			const tools = [
				"uname",
				"ls",
				"grep",
				"awk",
				"cut",
				"chmod",
				"mkdir",
				"cp",
				"mv",
				"rm",
				"mktemp",
				"cat",
			];
			const wanted = [...tools, "wget", "shasum"];
			const missing = wanted.filter((tool) => !Bun.which(tool));
			if (missing.length > 0) {
				console.warn(`note: skipping the wget/shasum install test: ${missing.join(", ")} not installed.`);
				return;
			}
			const root = tempDir();
			const bin = join(root, "path");
			mkdirSync(bin);
			for (const tool of wanted) symlinkSync(Bun.which(tool)!, join(bin, tool));
			// shasum is a perl script: it needs perl on the PATH too.
			if (Bun.which("perl")) symlinkSync(Bun.which("perl")!, join(bin, "perl"));
			const dir = join(root, "bin");
			const result = await install({
				PATH: bin,
				HOME: root,
				CHOPIN_INSTALL_DIR: dir,
				CHOPIN_DOWNLOAD_URL: releases.downloadUrl,
			});
			expect(result.stderr).toContain(`installed at ${dir}/chopin`);
			expect(result.code).toBe(0);
			expect(await sha256File(join(dir, "chopin"))).toBe(await sha256File(cli.binary));
		},
		INSTALL_TIMEOUT_MS,
	);
});

describe("install.sh, statically", () => {
	const shellcheck = Bun.which("shellcheck");
	if (!shellcheck && !REQUIRE_ALL) {
		console.warn(
			"note: shellcheck is not installed; install.sh is not linted. CHOPIN_TEST_REQUIRE_ALL=1 makes this a failure.",
		);
	}
	test.skipIf(!shellcheck && !REQUIRE_ALL)("is clean under shellcheck as POSIX sh", async () => {
		expect(shellcheck).not.toBeNull();
		const result = await run([shellcheck!, "--shell=sh", "--severity=style", SCRIPT]);
		expect(result.stdout + result.stderr).toBe("");
		expect(result.code).toBe(0);
	});

	test("every error is a documented code, and every code documented for it is used", () => {
		const text = readFileSync(SCRIPT, "utf8");
		const codes = new Set([...text.matchAll(/\bfail ([a-z][a-z-]*) /g)].map((m) => m[1]!));
		expect([...codes].sort()).toEqual(documentedCodes("install.sh"));
	});

	test("keeps the contract: CHOPIN_VERSION, CHOPIN_INSTALL_DIR, ~/.chopin/bin, one download base line", () => {
		const text = readFileSync(SCRIPT, "utf8");
		expect(text).toStartWith("#!/bin/sh\n");
		expect(text).toContain("install_dir=$HOME/.chopin/bin");
		expect(text).toContain("install_dir=$" + "{CHOPIN_INSTALL_DIR:-}");
		expect(text).toContain("version=$" + "{CHOPIN_VERSION:-}");
		expect(text.match(/^default_download_url='[^']*'$/gm)).toEqual([
			"default_download_url='https://github.com/chopin-app/chopin/releases/download/v{version}'",
		]);
		// Run as a whole or not at all: a download cut short must not run half a script.
		expect(text.trimEnd()).toEndWith('main "$@"');
	});
});
