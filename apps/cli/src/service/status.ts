// `chopin service status`: installed or not, running (and whether a restart into a new version is pending) or stopped
// with the last daemon's reason (daemon-exit.json), from the definition, the manager and the control socket.
import { readDaemonExit } from "../local/daemon-exit";
import { CliError } from "../program/errors";
import { type RunningDaemon, runningDaemon } from "./daemon-control";
import { programOf } from "./definition";
import type { ServiceDeps } from "./deps";
import { serviceDefinitionPath, serviceLogPath, serviceManagerFor } from "./names";
import { platformService } from "./platforms";
import { commandText, failureText } from "./runner";
import type { ServiceStatus } from "./status-schema";

export type { ServiceStatus };

export async function serviceStatus(deps: ServiceDeps): Promise<ServiceStatus> {
	const platform = platformService(deps.platform);
	const definition = serviceDefinitionPath(deps.platform, deps.env, deps.home, deps.paths.stateDir);
	const status: ServiceStatus = {
		state: "not-installed",
		manager: serviceManagerFor(deps.platform),
		definition,
		logFile: serviceLogPath(deps.platform, deps.paths.stateDir),
		argv: null,
		pid: null,
		runningVersion: null,
		installedVersion: null,
		lastExit: null,
		managerSays: null,
		problem: null,
	};
	if (deps.files.read(definition) === undefined) return status;
	status.argv = platform.argvOf(deps, definition) ?? null;
	const problems: string[] = [];
	const manager = await platform.query(deps);
	if (manager.problem) problems.push(`the service manager could not be asked: ${manager.problem}`);
	let daemon: RunningDaemon | undefined;
	try {
		daemon = await runningDaemon(deps);
	} catch (error) {
		if (!(error instanceof CliError) || error.code === "interrupted") throw error;
		problems.push(`the daemon's control socket: ${error.message}`);
	}
	// The daemon answering is the service's when the manager names its pid, or when it says it runs under it (a
	// `chopin run` in a terminal is not).
	const ours =
		daemon && (daemon.pid === manager.pid || daemon.service === status.manager) ? daemon : undefined;
	// The manager knows best; where it cannot tell (Task Scheduler in another language), the service's daemon decides.
	const running = manager.active ?? ours !== undefined;
	status.managerSays = manager.lastExit ?? null;
	if (running) {
		status.pid = manager.pid ?? ours?.pid ?? null;
		status.runningVersion = ours?.version ?? null;
		const program = programOf(status.argv ?? undefined);
		if (program) status.installedVersion = await installedVersion(deps, program, problems);
		const pending =
			status.runningVersion !== null &&
			status.installedVersion !== null &&
			status.runningVersion !== status.installedVersion;
		status.state = pending ? "restart-pending" : "running";
	} else {
		status.state = "stopped";
		const exit = readDaemonExit(deps.paths);
		if (exit) {
			const { at, exitCode, code, message } = exit;
			status.lastExit = { at, exitCode, code, message, hint: exit.hint ?? null };
		}
	}
	status.problem = problems.length > 0 ? problems.join("; ") : null;
	return status;
}

/** What the installed program says its version is (the binary the service starts, upgraded in place or not). */
async function installedVersion(
	deps: ServiceDeps,
	program: string[],
	problems: string[],
): Promise<string | null> {
	const argv = [...program, "--version"];
	const result = await deps.run(argv);
	const version = result.stdout.trim().split("\n").at(-1)?.trim();
	if (result.exitCode === 0 && version) return version;
	problems.push(`the installed chopin did not answer \`${commandText(argv)}\`: ${failureText(result)}`);
	return null;
}

/** The status for a person: what it is, then where things are, then why it stopped and what to do. */
export function formatServiceStatus(status: ServiceStatus): string {
	const lines: string[] = [];
	const row = (label: string, text: string) => lines.push(`${`${label}:`.padEnd(12)}${text}`);
	const manager = { systemd: "systemd", launchd: "launchd", task: "Task Scheduler" }[status.manager];
	switch (status.state) {
		case "not-installed":
			row("Service", `not installed (${manager}); \`chopin service install\` installs it`);
			break;
		case "running":
			row("Service", `running${status.pid ? `, pid ${status.pid}` : ""}${version(status)} (${manager})`);
			break;
		case "restart-pending":
			row(
				"Service",
				`running${status.pid ? `, pid ${status.pid}` : ""} (${manager}); restart pending: it runs ${status.runningVersion}, ${status.installedVersion} is installed (\`chopin service install\` restarts it)`,
			);
			break;
		case "stopped":
			row("Service", `stopped (${manager})`);
			break;
	}
	if (status.state !== "not-installed") {
		row("Definition", status.definition);
		if (status.argv) row("Runs", commandText(status.argv));
		row("Log", status.logFile);
	}
	if (status.lastExit) {
		const exit = status.lastExit;
		row("Last exit", `${exit.code} (exit ${exit.exitCode}) at ${exit.at}: ${exit.message}`);
		if (exit.hint) row("Next", exit.hint);
	}
	if (status.managerSays && status.state === "stopped") row("Manager", status.managerSays);
	if (status.problem) row("Problem", status.problem);
	return `${lines.join("\n")}\n`;
}

function version(status: ServiceStatus): string {
	return status.runningVersion ? `, version ${status.runningVersion}` : "";
}
