// `chopin status`: version, pairing (never the token), config, the running daemon and the log path; --json for scripts.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../context";
import { credentialDescriptionSchema, describeCredential } from "../credential";
import { CliError } from "../errors";
import { daemonStatusSchema, ipcRequest } from "../ipc";
import { loadMachineConfig, type MachineConfig } from "../machine-config";
import { parseOptions } from "../options";
import { examples, type Run } from "./help";

export const statusOptionsSchema = z.strictObject({ json: z.boolean() });
export type StatusOptions = z.infer<typeof statusOptionsSchema>;

/** The report, printed as is by --json: the single source of what status shows. */
export const statusReportSchema = z.strictObject({
	version: z.string(),
	installMethod: z.enum(["npm", "script", "binary", "source"]),
	credential: credentialDescriptionSchema,
	machine: z.union([
		z.strictObject({ configured: z.literal(false), file: z.string() }),
		z.strictObject({ configured: z.literal(false), file: z.string(), problem: z.string() }),
		z.strictObject({
			configured: z.literal(true),
			file: z.string(),
			server: z.string(),
			label: z.string(),
			checkouts: z.array(
				z.strictObject({
					path: z.string(),
					repository: z.string(),
					origin: z.string(),
					branch: z.string().optional(),
				}),
			),
			acpCommand: z.array(z.string()).optional(),
			planner: z
				.strictObject({
					command: z.array(z.string()),
					agent: z.string().optional(),
					/** Only the names: the values may be secrets. */
					envKeys: z.array(z.string()),
					documents: z.array(z.strictObject({ document: z.string(), checkout: z.string().optional() })),
					sandbox: z.strictObject({ enabled: z.boolean(), write: z.array(z.string()) }),
				})
				.optional(),
		}),
	]),
	daemon: z.union([
		z.strictObject({ running: z.literal(true), restartPending: z.boolean(), ...daemonStatusSchema.shape }),
		z.strictObject({ running: z.literal(false), problem: z.string().optional() }),
	]),
	logFile: z.string(),
});

export type StatusReport = z.infer<typeof statusReportSchema>;

export function statusCommand(ctx: CliContext, run: Run<StatusOptions> = runStatus): Command {
	const command = new Command("status");
	return command
		.description("Show whether this machine is paired, what it serves, and whether its daemon runs.")
		.option("--json", "print the report as JSON on stdout and nothing else there", false)
		.addHelpText(
			"after",
			examples(
				[
					["See the machine's state", "chopin status"],
					["Check from a script whether the daemon runs", "chopin status --json | jq .daemon.running"],
				],
				"Exit status: 0 when paired with a running daemon, 3 when not paired, 4 when no daemon runs.",
			),
		)
		.action(async () => run(parseOptions(statusOptionsSchema, command.opts(), "status"), ctx));
}

export async function runStatus(options: StatusOptions, ctx: CliContext): Promise<void> {
	const report = await gatherStatus(ctx);
	if (options.json) ctx.stdout.write(`${JSON.stringify(statusReportSchema.parse(report), null, 2)}\n`);
	else ctx.stdout.write(formatStatus(report));
	const problem = statusProblem(report);
	if (problem) throw problem;
}

export async function gatherStatus(ctx: CliContext): Promise<StatusReport> {
	const credential = describeCredential({
		paths: ctx.paths,
		platform: ctx.platform,
		secrets: ctx.secrets,
		log: ctx.log,
	});
	let machine: StatusReport["machine"];
	const file = ctx.paths.machineConfigFile;
	try {
		const config = loadMachineConfig(ctx.paths);
		machine = config ? describeConfig(file, config) : { configured: false, file };
	} catch (error) {
		if (!(error instanceof CliError)) throw error;
		machine = { configured: false, file, problem: error.message };
	}
	let daemon: StatusReport["daemon"];
	try {
		const answer = await ipcRequest(
			{ socket: ctx.paths.socket, clock: ctx.clock, signal: ctx.signal },
			{ type: "status" },
		);
		daemon = { running: true, restartPending: answer.status.version !== ctx.version, ...answer.status };
	} catch (error) {
		if (!(error instanceof CliError) || error.code === "interrupted") throw error;
		daemon =
			error.code === "daemon-not-running" ? { running: false } : { running: false, problem: error.message };
	}
	ctx.log.debug(
		{ paired: credential.stored, configured: machine.configured, daemon: daemon.running },
		"status gathered",
	);
	return {
		version: ctx.version,
		installMethod: ctx.installMethod,
		credential,
		machine,
		daemon,
		logFile: ctx.paths.logFile,
	};
}

function describeConfig(file: string, config: MachineConfig): StatusReport["machine"] {
	const planner = config.planner;
	return {
		configured: true,
		file,
		server: config.server,
		label: config.label,
		checkouts: config.checkouts,
		...(config.acpCommand ? { acpCommand: config.acpCommand } : {}),
		...(planner
			? {
					planner: {
						command: planner.command,
						...(planner.agent ? { agent: planner.agent } : {}),
						envKeys: Object.keys(planner.env).sort(),
						documents: planner.documents,
						sandbox: planner.sandbox,
					},
				}
			: {}),
	};
}

/** The error status ends with, most fundamental first: not paired, then a damaged file, then no daemon. */
export function statusProblem(report: StatusReport): CliError | undefined {
	const { credential, machine, daemon } = report;
	if (!credential.stored) {
		return new CliError(
			"not-paired",
			"This machine is not paired with a Chopin server.",
			"Run `chopin connect` to pair it.",
		);
	}
	if (!credential.valid)
		return new CliError(
			"credential-invalid",
			credential.problem,
			`Delete ${credential.file} and run \`chopin connect\` again.`,
		);
	if ("problem" in machine)
		return new CliError(
			"config-invalid",
			machine.problem,
			`Fix or delete ${machine.file}, then run \`chopin connect\`.`,
		);
	if (!daemon.running) {
		return new CliError(
			"not-connected",
			daemon.problem ?? "This machine is paired, but no chopin daemon is running.",
			"Start it with `chopin run` or `chopin service install`.",
		);
	}
	return undefined;
}

export function formatStatus(report: StatusReport): string {
	const lines: string[] = [`chopin ${report.version} (installed with ${report.installMethod})`];
	const { credential, machine, daemon } = report;
	if (!credential.stored) lines.push("Paired:     no (run `chopin connect`)");
	else if (!credential.valid) lines.push(`Paired:     credential unreadable (${credential.problem})`);
	else
		lines.push(
			`Paired:     yes, with ${credential.server} as machine ${credential.machineId} since ${credential.createdAt}`,
		);
	if (credential.stored) lines.push(`Credential: stored in ${credential.file}`);
	if (machine.configured) {
		lines.push(`Machine:    ${machine.label} (${machine.file})`);
		if (machine.acpCommand) lines.push(`ACP agent:  ${machine.acpCommand.join(" ")}`);
		if (machine.planner) {
			const planner = machine.planner;
			lines.push(
				`Planner:    ${planner.command.join(" ")}${planner.agent ? ` (agent ${planner.agent})` : ""}`,
			);
			lines.push(
				`Sandbox:    ${planner.sandbox.enabled ? "on" : "off"}${planner.envKeys.length > 0 ? `; env ${planner.envKeys.join(", ")}` : ""}`,
			);
			for (const doc of planner.documents) lines.push(`  document  ${doc.document}`);
		}
	} else if ("problem" in machine) {
		lines.push(`Machine:    config unreadable (${machine.problem})`);
	} else {
		lines.push("Machine:    not configured");
	}
	if (daemon.running) {
		const pending = daemon.restartPending
			? `; restart pending: it runs ${daemon.version}, ${report.version} is installed`
			: "";
		lines.push(
			`Daemon:     running, pid ${daemon.pid}, version ${daemon.version}, since ${daemon.startedAt}${pending}`,
		);
	} else {
		lines.push(`Daemon:     not running${daemon.problem ? ` (${daemon.problem})` : ""}`);
	}
	const checkouts = daemon.running ? daemon.checkouts : machine.configured ? machine.checkouts : [];
	lines.push(checkouts.length > 0 ? "Checkouts:" : "Checkouts:  none");
	for (const checkout of checkouts) lines.push(`  ${checkout.repository}  ${checkout.path}`);
	lines.push(`Log:        ${report.logFile}`);
	return `${lines.join("\n")}\n`;
}
