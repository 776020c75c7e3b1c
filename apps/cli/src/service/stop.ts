// Stopping an installed service without removing it: what `chopin stop` asks first, since a service's daemon stopped
// through its socket alone would be started again by its manager (systemd's Restart=always).
import type { ServiceDeps } from "./deps";
import { type ServiceManagerKind, serviceDefinitionPath, serviceManagerFor } from "./names";

export interface ServiceStop {
	manager: ServiceManagerKind;
	/** Whether a service definition is installed. */
	installed: boolean;
	/** Whether a running (or restarting) service was stopped; false when there was nothing to stop. */
	stopped: boolean;
}

/**
 * Stops the installed service, gracefully, and waits for its daemon to go: systemd `stop` (SIGTERM; systemd waits),
 * launchd `kill SIGTERM` (the daemon exits 0, which KeepAlive does not restart), Task Scheduler through
 * <state>/stop-request (`/End` if it does not go in time). It stays installed and starts again at the next login.
 */
export async function stopInstalledService(deps: ServiceDeps): Promise<ServiceStop> {
	const manager = serviceManagerFor(deps.platform);
	const file = serviceDefinitionPath(deps.platform, deps.env, deps.home, deps.paths.stateDir);
	if (deps.files.read(file) === undefined) return { manager, installed: false, stopped: false };
	// The managers' modules are loaded only now: with nothing installed, `chopin stop` goes straight to the socket.
	const { platformService } = await import("./platforms");
	const stopped = await platformService(deps.platform).stop(deps);
	return { manager, installed: true, stopped };
}
