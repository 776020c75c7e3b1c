// What `chopin status --json` prints, as one zod schema: the stable shape documented in docs/cli.md. status-report.ts
// builds the report without loading zod; the tests check every report they see against this schema.
import { INSTALL_METHODS, runStateSchema } from "@chopin/agent-link/machine/report";
import { z } from "zod";
import { daemonPlannerSchema } from "../local/ipc";

const SERVICE_MANAGERS = ["systemd", "launchd", "task"] as const;

/** What `chopin status` may show about the credential: everything but the token. */
export const credentialDescriptionSchema = z.union([
	z.strictObject({ stored: z.literal(false), file: z.string() }),
	z.strictObject({
		stored: z.literal(true),
		valid: z.literal(true),
		file: z.string(),
		server: z.string(),
		machineId: z.string(),
		createdAt: z.string(),
	}),
	z.strictObject({ stored: z.literal(true), valid: z.literal(false), file: z.string(), problem: z.string() }),
]);

export type CredentialDescription = z.infer<typeof credentialDescriptionSchema>;

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
			/** The service manager that runs it, or null when it was started by hand (`chopin run`). */
			service: z.enum(SERVICE_MANAGERS).nullable(),
		}),
		z.strictObject({
			running: z.literal(false),
			problem: z.string().nullable(),
			/** How the last daemon ended (daemon-exit.json), when one was recorded. */
			lastExit: z
				.strictObject({
					at: z.string(),
					exitCode: z.number().int(),
					code: z.string(),
					message: z.string(),
					hint: z.string().optional(),
				})
				.nullable(),
		}),
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
	/**
	 * The user service: not installed; running (its daemon answers); restart pending (its daemon runs another
	 * version than the installed one); or stopped (installed, its daemon not running: daemon.lastExit says why).
	 */
	service: z.strictObject({
		state: z.enum(["not-installed", "running", "restart-pending", "stopped"]),
		manager: z.enum(SERVICE_MANAGERS),
		/** The unit, plist, or (Task Scheduler) the copy of the task chopin keeps. */
		definition: z.string(),
	}),
});

export type StatusReport = z.infer<typeof statusReportSchema>;
