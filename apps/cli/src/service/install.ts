// `chopin service install`: checks everything first (paired, the daemon's commands resolve under the service's PATH,
// the manager is there), then writes the definition, takes over from a daemon running in a terminal, and (re)starts.
import { ensurePrivateDir } from "../local/paths";
import { dirnamePath } from "../local/plain-path";
import { requireCredential } from "../machine/credential";
import { loadMachineConfig } from "../machine/machine-config";
import { CliError } from "../program/errors";
import { runningDaemon, stopThroughSocket } from "./daemon-control";
import { buildDefinition, type ServiceDefinition } from "./definition";
import { type ServiceDeps, say } from "./deps";
import { TASK_NAME } from "./names";
import { platformService } from "./platforms";
import { commandText } from "./runner";

/** Installs the service, or installs it again (a new binary, a new PATH): idempotent. */
export async function installService(deps: ServiceDeps): Promise<ServiceDefinition> {
	requireCredential(deps);
	const config = loadMachineConfig(deps.paths);
	const platform = platformService(deps.platform);
	const { definition, commands } = buildDefinition(deps, config);
	await platform.check(deps);
	warnAboutTheInstall(deps, definition);
	for (const { entry, why } of commands.dropped)
		say(deps, `Left out of the service's PATH: ${entry} (${why}).`);
	// The service's output goes to <state>/logs/service.log, which the manager opens (it creates no directory).
	if (definition.manager !== "task") ensurePrivateDir(dirnamePath(deps.platform, definition.logFile));
	await platform.install(deps, definition, (servicePid) => stopOtherDaemon(deps, servicePid));
	say(deps, `Installed the chopin service: ${describe(definition)}.`);
	say(deps, `It runs \`${commandText(definition.argv)}\`${outputText(definition)}.`);
	say(
		deps,
		"It is running now, and starts again at login and after a reboot; `chopin service status` shows it.",
	);
	return definition;
}

function describe(definition: ServiceDefinition): string {
	switch (definition.manager) {
		case "systemd":
			return `the systemd user unit ${definition.file}`;
		case "launchd":
			return `the LaunchAgent ${definition.file}`;
		case "task":
			return `the Task Scheduler task ${TASK_NAME} (a copy of its XML in ${definition.file})`;
	}
}

function outputText(definition: ServiceDefinition): string {
	return definition.manager === "task"
		? `; it appends its output to ${definition.logFile}`
		: `; its output is appended to ${definition.logFile}`;
}

function warnAboutTheInstall(deps: ServiceDeps, definition: ServiceDefinition): void {
	if (deps.installMethod === "source") {
		say(
			deps,
			`warning: this chopin runs from a source checkout, so the service runs \`${commandText(definition.program)}\`: whatever that checkout holds at each start, not a stable install. Install chopin (docs/install.md) and run \`chopin service install\` from it.`,
		);
	}
	if (definition.manager === "task") {
		// The task gets the user's environment at logon, not this shell's: an override set only here does not reach it.
		for (const name of ["CHOPIN_STATE_DIR", "CHOPIN_CONFIG_DIR"]) {
			if (deps.env[name]?.trim()) {
				say(
					deps,
					`warning: ${name} is set in this shell; the task gets your user's environment variables, so set it there too (\`setx ${name} <dir>\`) or the service uses its default directory.`,
				);
			}
		}
	}
}

/**
 * A daemon answering on the control socket that is not the service's (a `chopin run` in a terminal) holds the
 * machine: stopped gracefully through its socket, and said, before the service starts.
 */
async function stopOtherDaemon(deps: ServiceDeps, servicePid: number | undefined): Promise<void> {
	const daemon = await runningDaemon(deps);
	if (!daemon || daemon.pid === servicePid) return;
	say(
		deps,
		`A chopin daemon (pid ${daemon.pid}) runs outside the service (\`chopin run\` in a terminal?): stopping it so that the service serves this machine.`,
	);
	if (!(await stopThroughSocket(deps, daemon))) {
		throw new CliError(
			"service-failed",
			`The chopin daemon (pid ${daemon.pid}) was asked to stop but still runs, so the service could not take over.`,
			`Stop it (Ctrl-C in its terminal, or \`kill ${daemon.pid}\`), then run \`chopin service install\` again.`,
		);
	}
	say(deps, `Stopped the chopin daemon (pid ${daemon.pid}).`);
}
