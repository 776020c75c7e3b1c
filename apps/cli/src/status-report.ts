// What `chopin status` knows, as one zod schema (the stable `--json` shape): gathered from the files, the daemon's
// control socket, and, when the daemon cannot say who the machine belongs to, a short call to the server.
import { INSTALL_METHODS, runStateSchema } from "@chopin/agent-link/machine/report";
import { z } from "zod";
import type { CliContext } from "./context";
import { credentialDescriptionSchema, describeCredential, loadCredential } from "./credential";
import { CliError } from "./errors";
import { type DaemonStatus, daemonPlannerSchema, ipcRequest } from "./ipc";
import { loadMachineConfig, type MachineConfig } from "./machine-config";

/** How long status waits for the server when the daemon cannot say who the machine belongs to. */
export const ACCOUNT_LOOKUP_TIMEOUT_MS = 3_000;

const CONNECTION_STATES = ["connected", "connecting", "waiting", "stopped", "not-running"] as const;
const ACCESS = ["ok", "forbidden", "unknown"] as const;

export const configDescriptionSchema = z.union([
	z.strictObject({ configured: z.literal(false), file: z.string() }),
	z.strictObject({ configured: z.literal(false), file: z.string(), problem: z.string() }),
	z.strictObject({
		configured: z.literal(true),
		file: z.string(),
		server: z.string(),
		label: z.string(),
		acpCommand: z.array(z.string()).nullable(),
		planner: z
			.strictObject({
				command: z.array(z.string()),
				agent: z.string().nullable(),
				/** Only the names: the values may be secrets. */
				envKeys: z.array(z.string()),
				documents: z.array(z.strictObject({ document: z.string(), checkout: z.string().optional() })),
				sandbox: z.strictObject({ enabled: z.boolean(), write: z.array(z.string()) }),
			})
			.nullable(),
	}),
]);

/** The report `--json` prints: every key always present (null when unknown), documented in docs/cli.md. */
export const statusReportSchema = z.strictObject({
	version: z.string(),
	installMethod: z.enum(INSTALL_METHODS),
	/** The server this machine is paired with (the credential's), else the config's; null when neither. */
	server: z.string().nullable(),
	/** The account the machine belongs to, and where that came from. */
	account: z.strictObject({
		login: z.string().nullable(),
		source: z.enum(["daemon", "server", "unknown"]),
		problem: z.string().nullable(),
	}),
	machine: z.strictObject({ id: z.string(), label: z.string(), autoRun: z.boolean() }).nullable(),
	credential: credentialDescriptionSchema,
	config: configDescriptionSchema,
	daemon: z.union([
		z.strictObject({
			running: z.literal(true),
			pid: z.number().int(),
			version: z.string(),
			startedAt: z.string(),
			/** The daemon runs another version than the one installed: restart it to use this one. */
			restartPending: z.boolean(),
		}),
		z.strictObject({ running: z.literal(false), problem: z.string().nullable() }),
	]),
	connection: z.strictObject({
		state: z.enum(CONNECTION_STATES),
		since: z.string().nullable(),
		lastContact: z.string().nullable(),
		attempts: z.number().int().nonnegative(),
		nextAttemptAt: z.string().nullable(),
		lastError: z.string().nullable(),
	}),
	checkouts: z.array(
		z.strictObject({
			path: z.string(),
			repository: z.string(),
			origin: z.string().nullable(),
			branch: z.string().nullable(),
			/** The daemon holds its lock and serves it. */
			served: z.boolean(),
			state: z.enum([...CONNECTION_STATES, "not-served"]),
			lastContact: z.string().nullable(),
			access: z.enum(ACCESS).nullable(),
		}),
	),
	runs: z.array(runStateSchema),
	planners: z.array(daemonPlannerSchema),
	logFile: z.string(),
	service: z.strictObject({ state: z.enum(["not-installed", "running", "stopped"]) }),
});

export type StatusReport = z.infer<typeof statusReportSchema>;

export async function gatherStatus(ctx: CliContext): Promise<StatusReport> {
	const credential = describeCredential(ctx);
	const file = ctx.paths.machineConfigFile;
	let config: MachineConfig | undefined;
	let configDescription: StatusReport["config"];
	try {
		config = loadMachineConfig(ctx.paths);
		configDescription = config ? describeConfig(file, config) : { configured: false, file };
	} catch (error) {
		if (!(error instanceof CliError)) throw error;
		configDescription = { configured: false, file, problem: error.message };
	}
	const daemon = await askDaemon(ctx);
	const server = credential.stored && credential.valid ? credential.server : (config?.server ?? null);
	const { account, machine } = await whoseMachine(ctx, daemon.status);
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
				}
			: { running: false, problem: daemon.problem ?? null },
		connection,
		checkouts: checkoutsOf(config, status, connection),
		runs: status?.runs ?? [],
		planners: status?.planners ?? [],
		logFile: ctx.paths.logFile,
		// `chopin service` is a later task: until then no service is ever installed.
		service: { state: "not-installed" },
	};
}

async function askDaemon(ctx: CliContext): Promise<{ status?: DaemonStatus; problem?: string }> {
	try {
		const answer = await ipcRequest(
			{ socket: ctx.paths.socket, clock: ctx.clock, signal: ctx.signal },
			{ type: "status" },
		);
		return { status: answer.status };
	} catch (error) {
		if (!(error instanceof CliError) || error.code === "interrupted") throw error;
		return error.code === "daemon-not-running" ? {} : { problem: error.message };
	}
}

/** From the daemon's welcome; else a short GET /api/connector/machine; else unknown. */
async function whoseMachine(
	ctx: CliContext,
	daemon: DaemonStatus | undefined,
): Promise<Pick<StatusReport, "account" | "machine">> {
	if (daemon?.machine) {
		const { id, label, owner, autoRun } = daemon.machine;
		return { account: { login: owner, source: "daemon", problem: null }, machine: { id, label, autoRun } };
	}
	let credential: ReturnType<typeof loadCredential>;
	try {
		credential = loadCredential(ctx);
	} catch {
		credential = undefined;
	}
	if (!credential) return { account: { login: null, source: "unknown", problem: null }, machine: null };
	try {
		// Loaded only here: an unpaired machine, or one whose daemon answered, never needs it.
		const { ServerApi } = await import("./server-api");
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
