#!/usr/bin/env bun
// The chopin entry point: answers `--version` at once, asks the daemon for the plain `chopin status [--json]`
// (status-by-daemon.ts) or else runs it through status-main.ts, and hands every other command to process-main.ts.
//
// Scripts and installers run `chopin --version`, so it costs no more than Bun's own start: nothing
// else is imported before the answer. In a compiled binary (split ESM bytecode) what sits behind
// import() is another chunk, parsed and evaluated only when imported (docs/install.md § Start-up time).
import cliPackage from "../package.json" with { type: "json" };
import { findShortcut } from "./program/shortcuts";

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
	// What commander would print. console.log, not process.stdout: its first use loads node:stream and node:tty (~4 ms).
	console.log(cliPackage.version);
} else {
	const shortcut = findShortcut(argv);
	// Started by the npm launcher's JS shim: die with it, and take the interrupts it relays (launcher-link.ts).
	(process.env.CHOPIN_LAUNCHER_PID
		? import("./program/launcher-link").then(({ joinLauncher }) => joinLauncher())
		: Promise.resolve()
	)
		.then(() =>
			shortcut
				? import("./status/status-by-daemon")
						.then(({ statusByDaemon }) => statusByDaemon(shortcut))
						.then(
							(code) =>
								code ?? import("./status-main").then(({ runStatusProcess }) => runStatusProcess(shortcut)),
						)
				: import("./process-main").then(({ runProcess }) => runProcess(argv)),
		)
		.then(
			(code) => {
				process.exitCode = code;
			},
			(error: unknown) => {
				process.stderr.write(`error: ${String(error)}\n`);
				process.exitCode = 1;
			},
		);
}
