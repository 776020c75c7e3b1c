#!/usr/bin/env node
// The `chopin` command of the @chopin/cli npm package: it runs the compiled chopin binary from the
// @chopin/cli-<platform>-<arch> package that npm installed beside it as an optional dependency
// (the esbuild pattern), so `npm install -g @chopin/cli` works with plain Node.js and no Bun.
// Plain CommonJS for Node.js 18 and later; kept tiny because it runs before every command.

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");

const SUPPORTED = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"];

function fail(message, hint) {
	process.stderr.write(`error: ${message}\n`);
	if (hint) process.stderr.write(`hint: ${hint}\n`);
	process.exit(1);
}

function findBinary() {
	const platform = `${process.platform}-${process.arch}`;
	if (!SUPPORTED.includes(platform)) {
		fail(
			`chopin has no build for ${platform}.`,
			"Builds exist for Linux and macOS (x64, arm64) and Windows (x64).",
		);
	}
	const name = `@chopin/cli-${platform}`;
	const file = process.platform === "win32" ? "chopin.exe" : "chopin";
	try {
		return require.resolve(`${name}/bin/${file}`);
	} catch {
		const version = require("../package.json").version;
		fail(
			`The chopin binary for ${platform} is missing: the package ${name} is not installed.`,
			`npm installs it as an optional dependency of @chopin/cli, so an install with --no-optional or ` +
				`--omit=optional leaves it out. Reinstall without that option (npm install -g @chopin/cli@${version}), ` +
				`or add it yourself: npm install -g ${name}@${version}`,
		);
	}
}

const binary = findBinary();
if (process.platform !== "win32") {
	try {
		fs.accessSync(binary, fs.constants.X_OK);
	} catch {
		// An archive or a copy may drop the executable bit; put it back rather than fail.
		try {
			fs.chmodSync(binary, 0o755);
		} catch {}
	}
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });

// Ctrl-C reaches chopin straight from the terminal (same process group): passing it on as well
// would be a second Ctrl-C, which chopin takes as "stop at once". So it is only kept from
// killing this launcher first. A SIGTERM or SIGHUP sent to the launcher alone is passed on.
const ignore = () => {};
process.on("SIGINT", ignore);
const forwarders = {};
for (const signal of ["SIGTERM", "SIGHUP"]) {
	forwarders[signal] = () => child.kill(signal);
	process.on(signal, forwarders[signal]);
}

child.on("error", (error) => fail(`could not start ${binary}: ${error.message}`));
child.on("exit", (code, signal) => {
	if (signal) {
		// End the same way, so a shell or a supervisor sees what really happened.
		process.removeListener("SIGINT", ignore);
		if (forwarders[signal]) process.removeListener(signal, forwarders[signal]);
		process.exitCode = 128 + (os.constants.signals[signal] || 0);
		process.kill(process.pid, signal);
		return;
	}
	process.exit(code === null ? 1 : code);
});
