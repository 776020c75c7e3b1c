// What `chopin status` knows (the shape is status-report-schema.ts): gathered from the files, the daemon's control socket,
// and, when the daemon cannot say who the machine belongs to, a short call to the server.
//
// Without loading zod when it can (docs/install.md § Start-up time): a file whose exact bytes this version's full check
// accepted before is read as it is (checked-files.ts), and a daemon of this very version is believed, since the same code
// built its answer from the same types (ipc.ts answers status without zod; a process test holds a real daemon's answer
// to the schema). Anything else (a changed or damaged file, another version's daemon) loads the full checks, which
// explain what is wrong.
import { type CheckedRead, checkedReader } from "../local/checked-files";
import { readDaemonExit } from "../local/daemon-exit";
import type { DaemonStatus } from "../local/ipc";
import { sendIpcLine } from "../local/ipc-transport";
import type { Credential } from "../machine/credential";
import type { MachineConfig } from "../machine/machine-config";
import type { CliContext } from "../program/context";
import { CliError } from "../program/errors";
import type { ServerApiContext } from "../server-link/server-api";
import { serviceDefinitionPath, serviceManagerFor } from "../service/names";
import type { CredentialDescription, StatusReport } from "./status-report-schema";

export type { StatusReport };

type CheckedReader = (file: string) => CheckedRead;

/** What status needs of the context: the command tree's CliContext, or status-main.ts' smaller one. */
export type StatusContext = ServerApiContext &
	Pick<CliContext, "paths" | "secrets" | "stdout" | "stderr" | "env">;

/** How long status waits for the server when the daemon cannot say who the machine belongs to. */
export const ACCOUNT_LOOKUP_TIMEOUT_MS = 3_000;

/**
 * The report. `own` is the daemon's own status when the daemon itself builds the report for a client
 * (status-for-client.ts); else the daemon is asked over its socket.
 */
export async function gatherStatus(ctx: StatusContext, own?: DaemonStatus): Promise<StatusReport> {
	// Asked first: the files are read while the connection is made.
	const asking: ReturnType<typeof askDaemon> = own ? Promise.resolve({ status: own }) : askDaemon(ctx);
	const manager = serviceManagerFor(ctx.platform);
	const definition = serviceDefinitionPath(ctx.platform, ctx.env, ctx.home, ctx.paths.stateDir);
	const installed = Bun.file(definition).exists();
	const read = checkedReader(ctx.paths);
	const { credential, stored } = readCredential(ctx, read);
	const { config, description: configDescription } = readConfig(ctx, read);
	const daemon = await asking;
	const server = credential.stored && credential.valid ? credential.server : (config?.server ?? null);
	const { account, machine } = await whoseMachine(ctx, daemon.status, stored);
	const status = daemon.status;
	const connection: StatusReport["connection"] = status
		? {
				state: status.connection.state,
				since: status.connection.since,
				lastContact: status.connection.lastContact,
				attempts: status.connection.attempts,
				nextAttemptAt: status.connection.nextAttemptAt ?? null,
				lastError: status.connection.lastError ?? null,
			}
		: {
				state: "not-running",
				since: null,
				lastContact: null,
				attempts: 0,
				nextAttemptAt: null,
				lastError: null,
			};
	ctx.log.debug({ paired: credential.stored, daemon: Boolean(status) }, "status gathered");
	return {
		version: ctx.version,
		installMethod: ctx.installMethod,
		server,
		account,
		machine,
		credential,
		config: configDescription,
		daemon: status
			? {
					running: true,
					pid: status.pid,
					version: status.version,
					startedAt: status.startedAt,
					restartPending: status.version !== ctx.version,
					service: status.service ?? null,
				}
			: { running: false, problem: daemon.problem ?? null, lastExit: lastExitOf(ctx) },
		connection,
		checkouts: checkoutsOf(config, status, connection),
		runs: status?.runs ?? [],
		planners: status?.planners ?? [],
		logFile: ctx.paths.logFile,
		service: {
			state: !(await installed)
				? "not-installed"
				: !status?.service
					? "stopped"
					: status.version !== ctx.version
						? "restart-pending"
						: "running",
			manager,
			definition,
		},
	};
}

/** How the last daemon ended, as status shows it (never a secret: the daemon redacted it when it wrote it). */
function lastExitOf(ctx: StatusContext): Extract<StatusReport["daemon"], { running: false }>["lastExit"] {
	const recorded = readDaemonExit(ctx.paths);
	if (!recorded) return null;
	const { at, exitCode, code, message, hint } = recorded;
	return { at, exitCode, code, message, ...(hint && { hint }) };
}

/** A file as status sees it: absent, read (from the record, or checked in full), or why the full check refused it. */
type FileRead<T> =
	| { state: "missing" }
	| { state: "read"; value: T; trusted: boolean }
	| { state: "refused"; problem: string };

/** `file` as it is when the record vouches for it, else through `load`, the full check (undefined: no file). */
function readFile<T>(read: CheckedReader, file: string, load: () => T | undefined): FileRead<T> {
	const checked = read(file);
	if (checked.state === "missing") return { state: "missing" };
	if (checked.state === "trusted") return { state: "read", value: checked.json as T, trusted: true };
	try {
		const value = load();
		return value === undefined ? { state: "missing" } : { state: "read", value, trusted: false };
	} catch (error) {
		if (!(error instanceof CliError)) throw error;
		return { state: "refused", problem: error.message };
	}
}

/** The credential's description and, when it is valid, the credential (its token registered as a secret). */
function readCredential(
	ctx: StatusContext,
	read: CheckedReader,
): { credential: CredentialDescription; stored?: Credential } {
	const file = ctx.paths.credentialFile;
	const result = readFile(read, file, () => fullChecks().credential.loadCredential(ctx));
	if (result.state === "missing") return { credential: { stored: false, file } };
	if (result.state === "refused")
		return { credential: { stored: true, valid: false, file, problem: result.problem } };
	const stored = result.value;
	// The full check registers it as it loads it.
	if (result.trusted) ctx.secrets.add(stored.token);
	const { server, machineId, createdAt } = stored;
	return { credential: { stored: true, valid: true, file, server, machineId, createdAt }, stored };
}

function readConfig(
	ctx: StatusContext,
	read: CheckedReader,
): { config?: MachineConfig; description: StatusReport["config"] } {
	const file = ctx.paths.machineConfigFile;
	const result = readFile(read, file, () => fullChecks().machineConfig.loadMachineConfig(ctx.paths));
	if (result.state === "missing") return { description: { configured: false, file } };
	if (result.state === "refused")
		return { description: { configured: false, file, problem: result.problem } };
	return { config: result.value, description: describeConfig(file, result.value) };
}

async function askDaemon(ctx: StatusContext): Promise<{ status?: DaemonStatus; problem?: string }> {
	try {
		return { status: await daemonStatus(ctx) };
	} catch (error) {
		if (!(error instanceof CliError) || error.code === "interrupted") throw error;
		return error.code === "daemon-not-running" ? {} : { problem: error.message };
	}
}

/** The daemon's status answer: as it is from a daemon of this version, else checked in full. */
async function daemonStatus(ctx: StatusContext): Promise<DaemonStatus> {
	const options = { socket: ctx.paths.socket, clock: ctx.clock, signal: ctx.signal };
	const json = await sendIpcLine(options, { type: "status" });
	if (isStatusOfVersion(json, ctx.version)) return json.status;
	return fullChecks().ipc.checkIpcAnswer(json, "status").status;
}

function isStatusOfVersion(json: unknown, version: string): json is { type: "status"; status: DaemonStatus } {
	if (typeof json !== "object" || json === null) return false;
	const answer = json as { type?: unknown; status?: { version?: unknown } };
	return answer.type === "status" && typeof answer.status === "object" && answer.status?.version === version;
}

/** The modules that check in full, with zod: loaded (and zod set up) only when something needs them. */
function fullChecks(): {
	credential: typeof import("../machine/credential");
	machineConfig: typeof import("../machine/machine-config");
	ipc: typeof import("../local/ipc");
} {
	require("../program/zod-jitless");
	return {
		credential: require("../machine/credential"),
		machineConfig: require("../machine/machine-config"),
		ipc: require("../local/ipc"),
	};
}

/** From the daemon's welcome; else a short GET /api/connector/machine; else unknown. */
async function whoseMachine(
	ctx: StatusContext,
	daemon: DaemonStatus | undefined,
	credential: Credential | undefined,
): Promise<Pick<StatusReport, "account" | "machine">> {
	if (daemon?.machine) {
		const { id, label, owner, autoRun } = daemon.machine;
		return { account: { login: owner, source: "daemon", problem: null }, machine: { id, label, autoRun } };
	}
	if (!credential) return { account: { login: null, source: "unknown", problem: null }, machine: null };
	try {
		// Loaded only here: an unpaired machine, or one whose daemon answered, never needs it.
		const { ServerApi } = await import("../server-link/server-api");
		const info = await new ServerApi(ctx, credential.server).machine(
			credential.token,
			ACCOUNT_LOOKUP_TIMEOUT_MS,
		);
		const { id, label, owner, autoRun } = info.machine;
		return { account: { login: owner, source: "server", problem: null }, machine: { id, label, autoRun } };
	} catch (error) {
		if (!(error instanceof CliError) || error.code === "interrupted") throw error;
		return { account: { login: null, source: "unknown", problem: error.message }, machine: null };
	}
}

function checkoutsOf(
	config: MachineConfig | undefined,
	daemon: DaemonStatus | undefined,
	connection: StatusReport["connection"],
): StatusReport["checkouts"] {
	const served = new Map(daemon?.checkouts.map((c) => [c.path, c]));
	const out: StatusReport["checkouts"] = [];
	const seen = new Set<string>();
	for (const c of [...(config?.checkouts ?? []), ...(daemon?.checkouts ?? [])]) {
		if (seen.has(c.path)) continue;
		seen.add(c.path);
		const live = served.get(c.path);
		out.push({
			path: c.path,
			repository: c.repository,
			origin: c.origin ?? null,
			branch: c.branch ?? null,
			served: Boolean(live),
			state: live ? connection.state : "not-served",
			lastContact: live ? connection.lastContact : null,
			access: live?.access ?? null,
		});
	}
	return out;
}

function describeConfig(file: string, config: MachineConfig): StatusReport["config"] {
	const planner = config.planner;
	return {
		configured: true,
		file,
		server: config.server,
		label: config.label,
		acpCommand: config.acpCommand ?? null,
		planner: planner
			? {
					command: planner.command,
					agent: planner.agent ?? null,
					envKeys: Object.keys(planner.env).sort(),
					documents: planner.documents,
					sandbox: planner.sandbox,
				}
			: null,
	};
}
