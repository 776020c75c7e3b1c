// What the service code runs on: the parts of the context it uses, plus the command runner, the file probe and the
// user, all parameters so the systemd, launchd and Task Scheduler branches run in tests on any host.
import type { Clock } from "@chopin/agent-link/clock";
import type { Logger } from "../local/log";
import type { CliPaths, Platform } from "../local/paths";
import type { Secrets } from "../local/secrets";
import type { CliContext, Writer } from "../program/context";
import type { InstallMethod } from "../program/version";
import { type CommandRunner, spawnRunner } from "./runner";
import { hostServiceFiles, type ServiceFiles } from "./service-files";

export interface ServiceDeps {
	platform: Platform;
	env: Readonly<Record<string, string | undefined>>;
	home: string;
	paths: CliPaths;
	uid: number;
	/** The login name (`DOMAIN\name` on Windows). */
	user: string;
	/** Every systemctl, loginctl, launchctl, schtasks and the installed chopin's --version go through it. */
	run: CommandRunner;
	/** The definitions, the stop request, and the file questions of command resolution. */
	files: ServiceFiles;
	clock: Clock;
	signal: AbortSignal;
	stderr: Writer;
	log: Logger;
	/** The credential is registered here as it is read: no line may carry it. */
	secrets: Secrets;
	version: string;
	/** [binary] when compiled, [bun, main.ts] from source: what the service will start. */
	program: readonly string[];
	installMethod: InstallMethod;
	/** Whether systemd is this system's init (sd_booted(3): /run/systemd/system exists). */
	systemdBooted(): boolean;
}

export function serviceDeps(ctx: CliContext): ServiceDeps {
	return {
		platform: ctx.platform,
		env: ctx.env,
		home: ctx.home,
		paths: ctx.paths,
		uid: ctx.user.uid,
		user: ctx.user.name,
		run: spawnRunner({ spawn: ctx.spawn, env: ctx.env, signal: ctx.signal }),
		files: hostServiceFiles(ctx.platform),
		clock: ctx.clock,
		signal: ctx.signal,
		stderr: ctx.stderr,
		log: ctx.log,
		secrets: ctx.secrets,
		version: ctx.version,
		program: ctx.selfCommand,
		installMethod: ctx.installMethod,
		systemdBooted: () => {
			const { existsSync } = require("node:fs") as typeof import("node:fs");
			return existsSync("/run/systemd/system");
		},
	};
}

/** A line on stderr (status, never data). */
export function say(deps: Pick<ServiceDeps, "stderr">, text: string): void {
	deps.stderr.write(`${text}\n`);
}
