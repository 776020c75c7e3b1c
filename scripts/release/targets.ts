// The five platforms chopin ships for, and how each is named by Bun, by release assets and by npm.
export const TARGET_NAMES = [
	"linux-x64",
	"linux-arm64",
	"darwin-x64",
	"darwin-arm64",
	"windows-x64",
] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

export function isTargetName(name: string): name is TargetName {
	return (TARGET_NAMES as readonly string[]).includes(name);
}

export interface Target {
	/** `<os>-<arch>` as the release assets name it: linux, darwin, windows; x64, arm64. */
	readonly name: TargetName;
	/** `bun build --target`. */
	readonly bun: `bun-${TargetName}`;
	/** The release asset: `chopin-<os>-<arch>`, `.exe` on Windows. */
	readonly asset: string;
	/** Node's process.platform and process.arch, which npm's `os`/`cpu` fields and the launcher use. */
	readonly node: { readonly platform: "linux" | "darwin" | "win32"; readonly arch: "x64" | "arm64" };
	/** `@chopin/cli-<platform>-<arch>` (esbuild's naming: win32, not windows). */
	readonly npmPackage: string;
	/** The binary's file name inside that package's bin/. */
	readonly npmBinary: "chopin" | "chopin.exe";
}

function target(name: TargetName): Target {
	const [os, arch] = name.split("-") as [string, "x64" | "arm64"];
	const platform = os === "windows" ? "win32" : (os as "linux" | "darwin");
	const exe = os === "windows" ? ".exe" : "";
	return {
		name,
		bun: `bun-${name}`,
		asset: `chopin-${name}${exe}`,
		node: { platform, arch },
		npmPackage: `@chopin/cli-${platform}-${arch}`,
		npmBinary: exe ? "chopin.exe" : "chopin",
	};
}

export const TARGETS: readonly Target[] = TARGET_NAMES.map(target);

export function targetByName(name: TargetName): Target {
	return TARGETS.find((t) => t.name === name)!;
}

/** The target of the machine running this script, or undefined when chopin is not built for it. */
export function hostTarget(
	platform: string = process.platform,
	arch: string = process.arch,
): Target | undefined {
	return TARGETS.find((t) => t.node.platform === platform && t.node.arch === arch);
}
