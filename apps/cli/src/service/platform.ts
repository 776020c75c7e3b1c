// What each service manager (systemd, launchd, Task Scheduler) does for install, uninstall, status and stop: one
// shape, three modules, chosen by serviceManagerFor(platform).
import type { ServiceDefinition } from "./definition";
import type { ServiceDeps } from "./deps";
import type { ServiceManagerKind } from "./names";

/** What the manager says about the service right now. */
export interface ManagerState {
	/** Whether the manager has the service (loaded, registered). */
	loaded: boolean;
	/** Whether it runs; undefined when the manager cannot tell (then the control socket decides). */
	active: boolean | undefined;
	/** Whether there is something to stop: running, or waiting to restart. */
	stoppable: boolean;
	/** The daemon's pid, when the manager knows it. */
	pid?: number | undefined;
	/** The manager's own words about the last exit, when it has some. */
	lastExit?: string | undefined;
	/** Why the manager could not be asked. */
	problem?: string | undefined;
}

export interface PlatformService {
	readonly kind: ServiceManagerKind;
	/** Whether this system can run the service at all, asked before anything is written (throws what to do instead). */
	check(deps: ServiceDeps): Promise<void>;
	/**
	 * Writes the definition and (re)starts the service. `stopOther` stops a daemon that is not the service's (it is
	 * told the service's own pid, when the manager knows one) just before the start.
	 */
	install(
		deps: ServiceDeps,
		definition: ServiceDefinition,
		stopOther: (servicePid: number | undefined) => Promise<void>,
	): Promise<void>;
	/** Stops it gracefully and removes it; false when nothing was installed. */
	uninstall(deps: ServiceDeps, file: string): Promise<boolean>;
	query(deps: ServiceDeps): Promise<ManagerState>;
	/** Stops the running service (it stays installed); whether there was one to stop. */
	stop(deps: ServiceDeps): Promise<boolean>;
	/** The argv an installed definition runs, read back from its file, or undefined. */
	argvOf(deps: ServiceDeps, file: string): string[] | undefined;
}
