// cosign in the installers' tests: a PATH without it, or one with the stand-in (cosign-stand-in.sh) and its bundles.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Who signs a release's SHA256SUMS, as both installers name it. */
export const IDENTITY = "https://github.com/chopin-app/chopin/.github/workflows/release.yml@refs/tags/v";
export const IDENTITY_REGEXP =
	"^https://github[.]com/chopin-app/chopin/[.]github/workflows/release[.]yml@refs/tags/v[0-9A-Za-z.+-]+$";
export const ISSUER = "https://token.actions.githubusercontent.com";

/** The machine's PATH less any directory with a cosign in it: the tests choose whether the verifier is there. */
export const PATH_WITHOUT_COSIGN = (process.env.PATH ?? "")
	.split(":")
	.filter((dir) => dir !== "" && !existsSync(join(dir, "cosign")))
	.join(":");

/** An environment under `root` with the stand-in first on PATH, logging its arguments, and TMPDIR in root/tmp. */
export function withCosign(root: string) {
	const bin = join(root, "cosign-bin");
	mkdirSync(bin);
	copyFileSync(join(import.meta.dir, "cosign-stand-in.sh"), join(bin, "cosign"));
	chmodSync(join(bin, "cosign"), 0o755);
	mkdirSync(join(root, "tmp"));
	const log = join(root, "cosign.log");
	return {
		env: { PATH: `${bin}:${PATH_WITHOUT_COSIGN}`, TMPDIR: join(root, "tmp"), COSIGN_STAND_IN_LOG: log },
		/** The arguments of the cosign calls so far (the installers make at most one). */
		calls: () => (existsSync(log) ? [readFileSync(log, "utf8").trimEnd().split("\n")] : []),
	};
}

/** The stand-in's bundle: SHA256SUMS with these bytes, signed by this identity and issuer. */
export function standInBundle(sums: string, identity: string, issuer = ISSUER): string {
	return `stand-in-bundle ${new Bun.CryptoHasher("sha256").update(sums).digest("hex")} ${identity} ${issuer}\n`;
}
