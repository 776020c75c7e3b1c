// `chopin service uninstall`: stops the service gracefully and removes it; the credential, config and workspaces stay.
import { type ServiceDeps, say } from "./deps";
import { serviceDefinitionPath } from "./names";
import { platformService } from "./platforms";

/** Idempotent: nothing installed is a success that says so. Whether something was removed. */
export async function uninstallService(deps: ServiceDeps): Promise<boolean> {
	const file = serviceDefinitionPath(deps.platform, deps.env, deps.home, deps.paths.stateDir);
	const removed = await platformService(deps.platform).uninstall(deps, file);
	if (!removed) say(deps, "The chopin service is not installed: there is nothing to remove.");
	else say(deps, `Removed the chopin service (${file}); the credential, config and workspaces stay.`);
	return removed;
}
