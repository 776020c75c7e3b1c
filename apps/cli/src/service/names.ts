// What the user service is called and where its definition lives on each platform, and which exits it must not
// restart after. Small and free of Node built-ins: `chopin status` reads these on its quick path.

import type { Platform } from "../local/paths";
import { joinPath } from "../local/plain-path";
import { EXIT } from "../program/errors";

/** Which service manager runs the daemon on a platform. */
export type ServiceManagerKind = "systemd" | "launchd" | "task";

export function serviceManagerFor(platform: Platform): ServiceManagerKind {
	return platform === "darwin" ? "launchd" : platform === "win32" ? "task" : "systemd";
}

/** The systemd user unit's name. */
export const SYSTEMD_UNIT = "chopin.service";
/** The LaunchAgent's label (and its plist's name). */
export const LAUNCHD_LABEL = "dev.chopin.machine";
/** The Task Scheduler task's path and name. */
export const TASK_NAME = "\\Chopin\\chopin-machine";

/** The service as its manager knows it, for a line of output: `systemd user unit chopin.service`. */
export function serviceDescription(manager: ServiceManagerKind): string {
	switch (manager) {
		case "systemd":
			return `systemd user unit ${SYSTEMD_UNIT}`;
		case "launchd":
			return `LaunchAgent ${LAUNCHD_LABEL}`;
		case "task":
			return `Task Scheduler task ${TASK_NAME}`;
	}
}

/**
 * Exit codes after which the daemon must not be started again by its service: the machine is not paired (3), it
 * was revoked (10), lost its repository access (11), needs a newer chopin (12) or a new pairing (13), or another
 * process took it over (15). Starting again would only be refused again; the service stops and `chopin status`
 * says why. systemd is told so with RestartPreventExitStatus; launchd and Task Scheduler restart only after a
 * failure, so under them the daemon ends these with 0 (`chopin run --service launchd|task`) and records the reason.
 */
export const FINAL_EXIT_CODES: readonly number[] = [
	EXIT.notPaired,
	EXIT.machineRevoked,
	EXIT.repositoryAccessLost,
	EXIT.clientVersionRefused,
	EXIT.machineReauthorize,
	EXIT.replaced,
];

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The file that says the service is installed: the systemd unit, the LaunchAgent's plist, or (Task Scheduler keeps
 * its tasks to itself) the copy of the task's XML chopin keeps in its state dir.
 */
export function serviceDefinitionPath(platform: Platform, env: Env, home: string, stateDir: string): string {
	const join = (dir: string, ...names: string[]) => joinPath(platform, dir, ...names);
	switch (serviceManagerFor(platform)) {
		case "systemd":
			return join(env.XDG_CONFIG_HOME || join(home, ".config"), "systemd", "user", SYSTEMD_UNIT);
		case "launchd":
			return join(home, "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
		case "task":
			return join(stateDir, "service", "chopin-task.xml");
	}
}

/** Where the service's own output is appended (the daemon's log is logs/chopin.log beside it). */
export function serviceLogPath(platform: Platform, stateDir: string): string {
	return joinPath(platform, stateDir, "logs", "service.log");
}
