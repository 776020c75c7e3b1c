// @chopin/cli's postinstall: puts the platform binary itself at bin/chopin, in place of the JS shim, so that running
// `chopin` does not start Node.js first (esbuild's install.js does the same). npm's bin entry is a symlink to
// bin/chopin, which then runs the binary directly. Every step is optional: whatever goes wrong, the JS shim stays and
// works, so this script never fails an install.
//
// Not done (the shim stays) on Windows (npm starts bin entries through a .cmd that runs node, and the binary must end
// in .exe), under yarn (it may run install scripts in one place for several platforms, and Yarn 2+ cannot hold the
// binary) and pnpm (its bin shims run a file through the interpreter its first line names, read when linking), nor
// when the platform package is missing. Plain CommonJS for Node.js 18 and later.

const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const version = require("./package.json").version;
const shim = path.join(__dirname, "bin", "chopin");

/** Why the shim stays, or undefined when it may be replaced. */
function reasonToKeepShim() {
	if (process.platform === "win32") return "Windows";
	const agent = process.env.npm_config_user_agent || "";
	if (agent.startsWith("yarn/")) return "yarn";
	if (agent.startsWith("pnpm/")) return "pnpm";
	return undefined;
}

function platformBinary() {
	try {
		return require.resolve(`@chopin/cli-${process.platform}-${process.arch}/bin/chopin`);
	} catch {
		return undefined;
	}
}

/** The binary's answer to --version, or undefined when it does not run here. */
function versionOf(file) {
	try {
		const out = execFileSync(file, ["--version"], {
			stdio: ["ignore", "pipe", "ignore"],
			// Not the launcher's: this is not a launcher-started chopin.
			env: { ...process.env, CHOPIN_LAUNCHER_PID: "" },
			timeout: 60_000,
		});
		return out.toString().trim();
	} catch {
		return undefined;
	}
}

/** Replaces the shim with the binary; returns what it did, or why it did not. */
function replaceShim() {
	const reason = reasonToKeepShim();
	if (reason) return `kept the JS shim (${reason})`;
	const binary = platformBinary();
	if (!binary) return "kept the JS shim (no platform package)";
	// Beside the target, so the rename is atomic: nobody ever runs half a binary.
	const temp = path.join(__dirname, "bin", `.chopin.${process.pid}.tmp`);
	try {
		try {
			// A hard link takes no space; a copy where one cannot be made (another file system, no permission).
			fs.linkSync(binary, temp);
		} catch {
			fs.copyFileSync(binary, temp);
			fs.chmodSync(temp, 0o755);
		}
		const found = versionOf(temp);
		if (found !== version)
			return `kept the JS shim (the binary answered ${found ?? "nothing"}, not ${version})`;
		fs.renameSync(temp, shim);
		return "bin/chopin is the binary";
	} catch (error) {
		return `kept the JS shim (${error.code || error.message})`;
	} finally {
		try {
			fs.unlinkSync(temp);
		} catch {}
	}
}

// npm shows it only with --foreground-scripts; pnpm shows it.
process.stderr.write(`@chopin/cli: ${replaceShim()}\n`);
