// The Chopin-Client header every machine request carries, and MIN_CLI_VERSION: the refusal names the exact upgrade command.
import {
	CLIENT_HEADER,
	type ClientInfo,
	compareVersions,
	parseClientHeader,
	upgradeCommand,
} from "@chopin/agent-link/machine";
import { clientHeaderInvalid, clientVersionRefused, type MachineRefusal } from "./errors";

/** The client a request names; 400 client-header-invalid when it names none. */
export function readClient(req: Request): ClientInfo {
	const client = parseClientHeader(req.headers.get(CLIENT_HEADER));
	if (!client) throw clientHeaderInvalid();
	return client;
}

export interface VersionPolicy {
	/** MIN_CLI_VERSION; undefined accepts every version. */
	minVersion: string | undefined;
	/** The server's own version: CLI and server are released together, so upgrading names the newer of the two. */
	serverVersion: string;
	/** PUBLIC_URL, where install.sh and install.ps1 are served. */
	origin: string;
}

/** client-version-refused when the client is older than MIN_CLI_VERSION; undefined when it may talk to us. */
export function versionRefusal(client: ClientInfo, policy: VersionPolicy): MachineRefusal | undefined {
	const min = policy.minVersion;
	if (min === undefined || compareVersions(client.version, min) >= 0) return undefined;
	const target = compareVersions(policy.serverVersion, min) > 0 ? policy.serverVersion : min;
	return clientVersionRefused(
		min,
		client.version,
		upgradeCommand(client.install, target, policy.origin, client.os),
	);
}
