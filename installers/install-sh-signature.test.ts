// install.sh checking SHA256SUMS's signature: a real /bin/sh against a release host on loopback, with a stand-in cosign
// on PATH (an outside tool, not installable here) or none. The release is a small stand-in chopin: what is under test is
// the script (install-sh.test.ts installs the compiled chopin).
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hostTarget } from "../scripts/release/targets";
import { run } from "../scripts/testing/compiled-cli";
import {
	IDENTITY,
	IDENTITY_REGEXP,
	ISSUER,
	PATH_WITHOUT_COSIGN,
	standInBundle,
	withCosign,
} from "./testing/cosign";
import { type ReleaseServer, startReleaseServer } from "./testing/release-server";

const SCRIPT = join(import.meta.dir, "install.sh");
const VERSION = "7.7.7";
const BINARY = `#!/bin/sh\necho ${VERSION}\n`;
const ASSET = hostTarget()!.asset;
const SUMS = `${new Bun.CryptoHasher("sha256").update(BINARY).digest("hex")}  ${ASSET}\n`;

let release: string;
let releases: ReleaseServer;
beforeAll(() => {
	release = mkdtempSync(join(tmpdir(), "chopin-signed-release-"));
	writeFileSync(join(release, ASSET), BINARY, { mode: 0o755 });
	writeFileSync(join(release, "SHA256SUMS"), SUMS);
	releases = startReleaseServer(release, VERSION);
});
afterAll(async () => {
	await releases?.close();
	if (release) rmSync(release, { recursive: true, force: true });
});

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
	releases.reset();
});
function tempDir(): string {
	const dir = mkdtempSync(join(tmpdir(), "chopin-install-sig-"));
	dirs.push(dir);
	return dir;
}

/** install.sh into root/bin from the loopback release, with the environment given on top. */
function install(root: string, env: Record<string, string>) {
	return run(["/bin/sh", SCRIPT], {
		env: {
			PATH: PATH_WITHOUT_COSIGN,
			HOME: root,
			CHOPIN_INSTALL_DIR: join(root, "bin"),
			CHOPIN_DOWNLOAD_URL: releases.downloadUrl,
			...env,
		},
	});
}
/** A file of the install's temp directory, which TMPDIR puts under root/tmp. */
const tmpFile = (root: string, name: string) =>
	expect.stringMatching(new RegExp(`^${root}/tmp/[^/]+/${name}$`));

describe("install.sh with cosign on PATH (a stand-in that checks its arguments)", () => {
	test("a good signature on the latest release: any release tag of chopin-app/chopin's workflow, then installed", async () => {
		const root = tempDir();
		const cosign = withCosign(root);
		releases.files.set("SHA256SUMS.sigstore.json", standInBundle(SUMS, `${IDENTITY}${VERSION}`));
		const result = await install(root, cosign.env);
		expect(result.stderr).toContain(
			"SHA256SUMS is signed by chopin-app/chopin's release workflow (checked with cosign).\n",
		);
		expect(result.stderr).not.toContain("cosign is not installed");
		expect(result.code).toBe(0);
		expect(readFileSync(join(root, "bin", "chopin"), "utf8")).toBe(BINARY);
		expect(cosign.calls()).toEqual([
			[
				"verify-blob",
				"--bundle",
				tmpFile(root, "SHA256SUMS.sigstore.json"),
				"--certificate-identity-regexp",
				IDENTITY_REGEXP,
				"--certificate-oidc-issuer",
				ISSUER,
				tmpFile(root, "SHA256SUMS"),
			],
		]);
		expect(releases.requests).toEqual([
			`/releases/latest/download/${ASSET}`,
			"/releases/latest/download/SHA256SUMS",
			"/releases/latest/download/SHA256SUMS.sigstore.json",
		]);
		// Nothing of the check is left behind.
		expect(readdirSync(join(root, "tmp"))).toEqual([]);
	});

	test("with CHOPIN_VERSION the certificate must name that version's tag: another release's signature is refused", async () => {
		const root = tempDir();
		const cosign = withCosign(root);
		releases.files.set("SHA256SUMS.sigstore.json", standInBundle(SUMS, `${IDENTITY}${VERSION}`));
		expect((await install(root, { ...cosign.env, CHOPIN_VERSION: VERSION })).code).toBe(0);
		expect(cosign.calls()[0]?.slice(3, 5)).toEqual(["--certificate-identity", `${IDENTITY}${VERSION}`]);

		// The same bytes, signed when 0.0.1 was released: not this release's signature.
		releases.files.set("SHA256SUMS.sigstore.json", standInBundle(SUMS, `${IDENTITY}0.0.1`));
		const other = join(root, "other");
		const replayed = await install(root, {
			...cosign.env,
			CHOPIN_VERSION: VERSION,
			CHOPIN_INSTALL_DIR: other,
		});
		expect(replayed.code).toBe(1);
		expect(replayed.stderr).toContain(
			`  cosign: Error: none of the expected identities matched what was in the certificate, got subjects [${IDENTITY}0.0.1] with issuer ${ISSUER}\n`,
		);
		expect(replayed.stderr).toContain("chopin install: error [signature-invalid]: ");
		expect(() => readdirSync(other)).toThrow();
	});

	test("a bad signature is refused with cosign's reason, and an installed chopin stays exactly as it was", async () => {
		const root = tempDir();
		const cosign = withCosign(root);
		const dir = join(root, "bin");
		mkdirSync(dir);
		writeFileSync(join(dir, "chopin"), "#!/bin/sh\necho 0.0.1\n", { mode: 0o755 });
		const before = statSync(join(dir, "chopin"));
		releases.files.set("SHA256SUMS.sigstore.json", standInBundle("other bytes\n", `${IDENTITY}${VERSION}`));
		const result = await install(root, cosign.env);
		expect(result.code).toBe(1);
		expect(result.stderr).toMatch(
			/\n {2}cosign: Error: verifying blob \[[^\]]+\/SHA256SUMS\]: invalid signature when validating ASN\.1 encoded signature\n/,
		);
		expect(result.stderr).toContain(
			"chopin install: error [signature-invalid]: cosign found no valid signature by chopin-app/chopin's release workflow on SHA256SUMS; nothing was installed.\nchopin install: hint: ",
		);
		const after = statSync(join(dir, "chopin"));
		expect([after.ino, after.mtimeMs, readdirSync(dir)]).toEqual([before.ino, before.mtimeMs, ["chopin"]]);
		expect(readdirSync(join(root, "tmp"))).toEqual([]);
	});

	test("SHA256SUMS changed after signing is refused by its signature, before any SHA-256 is compared", async () => {
		const root = tempDir();
		const cosign = withCosign(root);
		releases.files.set("SHA256SUMS.sigstore.json", standInBundle(SUMS, `${IDENTITY}${VERSION}`));
		releases.files.set("SHA256SUMS", `${"0".repeat(64)}  ${ASSET}\n`);
		const result = await install(root, cosign.env);
		expect(result.code).toBe(1);
		expect(result.stderr).toContain("chopin install: error [signature-invalid]: ");
		expect(result.stderr).not.toContain("checksum-mismatch");
		expect(() => readdirSync(join(root, "bin"))).toThrow();
	});

	test("a good signature does not excuse the binary: one that does not match SHA256SUMS is still refused", async () => {
		const root = tempDir();
		const cosign = withCosign(root);
		releases.files.set("SHA256SUMS.sigstore.json", standInBundle(SUMS, `${IDENTITY}${VERSION}`));
		releases.files.set(ASSET, "#!/bin/sh\necho 6.6.6\n");
		const result = await install(root, cosign.env);
		expect(result.stderr).toContain("SHA256SUMS is signed by chopin-app/chopin's release workflow");
		expect(result.stderr).toContain(
			`chopin install: error [checksum-mismatch]: ${ASSET} does not match its SHA-256`,
		);
		expect(result.code).toBe(1);
		expect(() => readdirSync(join(root, "bin"))).toThrow();
	});

	test("a release without SHA256SUMS.sigstore.json is refused while cosign is there", async () => {
		const root = tempDir();
		const cosign = withCosign(root);
		const result = await install(root, cosign.env);
		expect(result.code).toBe(1);
		expect(result.stderr).toContain(
			`chopin install: error [signature-missing]: could not download ${releases.origin}/releases/latest/download/SHA256SUMS.sigstore.json, the signature of SHA256SUMS, so cosign cannot check it; nothing was installed.\n`,
		);
		expect(cosign.calls()).toEqual([]);
		expect(() => readdirSync(join(root, "bin"))).toThrow();
	});
});

describe("install.sh without cosign", () => {
	test("installs after the SHA-256 check, asks for no signature, and says in one line how to check by hand", async () => {
		const root = tempDir();
		const result = await install(root, { CHOPIN_VERSION: VERSION });
		expect(result.code).toBe(0);
		const target = join(root, "bin", "chopin");
		const notes = result.stderr.split("\n").filter((line) => line.includes("cosign"));
		expect(notes).toEqual([
			`note: cosign is not installed, so the signature on SHA256SUMS was not checked (the SHA-256 was). To check it: gh attestation verify ${target} --repo chopin-app/chopin, or cosign verify-blob --bundle SHA256SUMS.sigstore.json --certificate-identity ${IDENTITY}${VERSION} --certificate-oidc-issuer ${ISSUER} SHA256SUMS with both files from ${releases.origin}/releases/download/v${VERSION}`,
		]);
		expect(releases.requests).toEqual([
			`/releases/download/v${VERSION}/${ASSET}`,
			`/releases/download/v${VERSION}/SHA256SUMS`,
		]);
	});

	test("the SHA-256 check still fails closed", async () => {
		const root = tempDir();
		releases.files.set(ASSET, "#!/bin/sh\necho 6.6.6\n");
		const result = await install(root, {});
		expect(result.code).toBe(1);
		expect(result.stderr).toContain(
			`chopin install: error [checksum-mismatch]: ${ASSET} does not match its SHA-256`,
		);
		expect(result.stderr).not.toContain("note: cosign");
		expect(() => readdirSync(join(root, "bin"))).toThrow();
	});
});
