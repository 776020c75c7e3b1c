// `chopin connect`: pair this machine once (or reuse its pairing), add the checkout to machine.json, then hand the
// checkout to the running daemon or become the daemon. Planner options are stored for the next task to act on.
import { posix, win32 } from "node:path";
import { z } from "zod";
import type { DaemonStatus } from "../local/ipc";
import { nextMachineConfig } from "../machine/connect-config";
import {
	type Checkout,
	documentRefSchema,
	loadMachineConfig,
	saveMachineConfig,
} from "../machine/machine-config";
import { envEntrySchema, readEnvFile, warnUnmaskable } from "../machine/planner-env";
import { plannerCommandFromEnv, splitCommandLine } from "../program/command-line";
import { CommandWithTail } from "../program/command-tail";
import type { CliContext } from "../program/context";
import { CliError } from "../program/errors";
import { codedIssue, parseOptions, viaCliError } from "../program/options";
import type { ServerApi } from "../server-link/server-api";
import { serverOriginSchema } from "../server-link/server-origin";
import { examples, type Run } from "./help";

/** How long connect waits to learn whether a stored pairing still works before carrying on. */
export const PAIRING_CHECK_TIMEOUT_MS = 5_000;

/**
 * The ACP command: the words after `--`, run directly (never by a shell). One word with blanks in it (the command
 * quoted whole, `-- "npx my-agent --acp"`) is split into words as --planner-command is, with the same rules.
 */
const wordsAfterDash = z
	.array(z.string())
	.superRefine((words, ctx) => {
		if (words.length === 0 || words.some((w) => w === "")) {
			codedIssue(
				ctx,
				"acp-command-empty",
				words.length === 0
					? "Nothing follows `--`: the ACP command is missing."
					: "The ACP command after `--` has an empty word.",
				"Name the ACP agent's command after `--`, for example: chopin connect -- gemini --acp",
			);
		}
	})
	.transform((words, ctx) => {
		if (words.length !== 1 || !/\s/.test(words[0]!)) return words;
		try {
			return splitCommandLine(words[0]!, "acp");
		} catch (error) {
			if (!(error instanceof CliError)) throw error;
			codedIssue(ctx, error.code, error.message, error.hint);
			return z.NEVER;
		}
	});

/** What commander hands the action, before checking. */
const rawConnectSchema = z
	.strictObject({
		checkout: z.string().optional(),
		server: serverOriginSchema.optional(),
		label: z
			.string()
			.trim()
			.min(1, "is empty")
			.max(100, "is longer than 100 characters")
			// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
			.refine((label) => !/[\u0000-\u001f\u007f]/.test(label), "contains a control character")
			.optional(),
		planner: z.array(documentRefSchema).default([]),
		plannerCommand: viaCliError(splitCommandLine).optional(),
		agent: z
			.string()
			.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, "must be a name such as copilot or claude")
			.optional(),
		env: z.array(envEntrySchema).default([]),
		envFile: z.array(z.string().min(1)).default([]),
		sandbox: z.boolean(),
		sandboxWrite: z.array(z.string().min(1)).default([]),
		run: z.boolean(),
		acpCommand: wordsAfterDash.optional(),
	})
	.superRefine((raw, ctx) => {
		if (!raw.sandbox && raw.sandboxWrite.length > 0) {
			codedIssue(
				ctx,
				"sandbox-options-conflict",
				"--sandbox-write has no effect with --no-sandbox.",
				"Drop one of them: without the sandbox the Planner backend can already write anywhere you can.",
			);
		}
	});

export const connectOptionsSchema = z.strictObject({
	/** The checkout to serve, absolute (the current directory when none was given). */
	checkout: z.string(),
	server: z.string().optional(),
	label: z.string().optional(),
	planner: z.strictObject({
		documents: z.array(z.string()),
		/** From --planner-command, else CHOPIN_PLANNER_COMMAND; undefined keeps what the config has. */
		command: z.array(z.string()).optional(),
		agent: z.string().optional(),
		env: z.record(z.string(), z.string()),
		sandbox: z.strictObject({ enabled: z.boolean(), write: z.array(z.string()) }),
	}),
	/** The words after `--`; undefined keeps what the config has. */
	acpCommand: z.array(z.string()).optional(),
	/** --no-run: pair and configure, but neither start nor join a daemon. */
	run: z.boolean(),
});

export type ConnectOptions = z.infer<typeof connectOptionsSchema>;

/** The parse half: raw commander values (plus the environment and cwd) to checked options. */
export function parseConnectOptions(
	raw: unknown,
	ctx: Pick<CliContext, "cwd" | "env" | "platform">,
): ConnectOptions {
	const input = parseOptions(rawConnectSchema, raw, "connect");
	const path = ctx.platform === "win32" ? win32 : posix;
	// The flag wins over the environment; the variable is read (and checked) only when needed.
	const command = input.plannerCommand ?? plannerCommandFromEnv(ctx.env.CHOPIN_PLANNER_COMMAND);
	return connectOptionsSchema.parse({
		checkout: path.resolve(ctx.cwd, input.checkout ?? "."),
		server: input.server,
		label: input.label,
		planner: {
			documents: input.planner,
			command,
			agent: input.agent,
			// Repeated keys: the last one wins, as with `docker run -e`; --env over --env-file. The files are read
			// here, in the parse half, so a bad one is a usage error (exit 2) before anything is paired or written.
			env: Object.fromEntries([
				...input.envFile.flatMap((file) => readEnvFile(path.resolve(ctx.cwd, file))),
				...input.env,
			]),
			sandbox: { enabled: input.sandbox, write: input.sandboxWrite.map((p) => path.resolve(ctx.cwd, p)) },
		},
		acpCommand: input.acpCommand,
		run: input.run,
	});
}

export function connectCommand(ctx: CliContext, run: Run<ConnectOptions> = runConnect): CommandWithTail {
	const command = new CommandWithTail("connect");
	command
		.description("Pair this machine with a Chopin server and serve a checkout's builds and Planner backends.")
		.usage("[checkout] [options] [-- <ACP command...>]")
		.argument("[checkout]", "the git checkout to serve (default: the current directory)")
		.option("--server <url>", "the Chopin server's origin (https, or http on loopback)")
		.option("--label <name>", "a name for this machine, shown in Chopin")
		.option(
			"--planner <document>",
			"run a Planner backend for this document (id or URL); repeatable",
			collect,
		)
		.option(
			"--planner-command <command>",
			"the Planner backend command, split like a POSIX shell, nothing expanded",
		)
		.option("--agent <name>", "the agent the Planner backend uses (e.g. copilot)")
		.option("--env <KEY=VALUE>", "an environment variable for Planner backends; repeatable", collect)
		.option(
			"--env-file <path>",
			"KEY=VALUE lines for Planner backends (values stay out of argv); repeatable",
			collect,
		)
		.option("--no-sandbox", "run Planner backends without the sandbox")
		.option(
			"--sandbox-write <path>",
			"a path the sandboxed Planner backend may also write; repeatable",
			collect,
		)
		.option("--no-run", "pair and configure only: neither start the daemon nor hand it the checkout")
		.addHelpText(
			"after",
			examples(
				[
					[
						"Pair and serve the current checkout, building with Gemini",
						"chopin connect --server https://chopin.example -- gemini --acp",
					],
					["Serve another checkout on the running daemon", "chopin connect ~/src/other"],
					[
						"Run a Planner backend for a document",
						'chopin connect --planner https://chopin.example/octo-org/score/plan --planner-command "my-planner --flag" --agent copilot',
					],
					[
						"Give the backend a variable and a writable cache",
						"chopin connect --env-file ~/.config/my-planner.env --sandbox-write ~/.cache/my-planner",
					],
				],
				"Everything after -- is the ACP agent's command, passed on word for word.\nCHOPIN_PLANNER_COMMAND may hold the Planner command as a JSON array of words.",
			),
		)
		.action(async (checkout: string | undefined) => {
			const raw = { ...command.opts(), checkout, acpCommand: command.tail };
			await run(parseConnectOptions(raw, ctx), ctx);
		});
	return command;
}

/**
 * The run half: find the checkout's repository, pair (unless this server's credential is stored and
 * still works), write machine.json, then hand the checkout to the running daemon or become it.
 */
export async function runConnect(options: ConnectOptions, ctx: CliContext): Promise<void> {
	const [
		{ deleteCredential, loadCredential, saveCredential },
		{ runDaemon },
		{ describeCheckout },
		{ ipcRequest },
		{ pairMachine },
		{ pairingUi },
		{ ServerApi },
	] = await loadRunHalf();
	const info = await describeCheckout(ctx, options.checkout);
	const checkout: Checkout = {
		path: info.root,
		repository: info.remote.repository,
		origin: info.remote.url,
		...(info.branch ? { branch: info.branch } : {}),
	};
	let credential = loadCredential(ctx);
	const current = loadMachineConfig(ctx.paths);
	const server = options.server ?? credential?.server ?? current?.server;
	if (!server) {
		throw new CliError(
			"server-missing",
			"This machine is not paired yet, so `chopin connect` needs the server to pair with.",
			"Name it: chopin connect --server https://chopin.example",
		);
	}
	if (credential && credential.server !== server) {
		throw new CliError(
			"paired-elsewhere",
			`This machine is paired with ${credential.server}, not ${server}.`,
			`Run \`chopin disconnect\` first, then \`chopin connect --server ${server}\`.`,
		);
	}
	const api = new ServerApi(ctx, server);
	if (credential && !(await stillPaired(ctx, api, credential.token))) {
		deleteCredential(ctx);
		credential = undefined;
	}
	const config = nextMachineConfig(current, { server, hostname: ctx.hostname, checkout, options });
	if (credential) {
		ctx.stderr.write(`This machine is already paired with ${server}: no new pairing is needed.\n`);
	} else {
		const wire = config.checkouts.map(({ path, repository, origin, branch }) => ({
			path,
			repository,
			origin,
			...(branch ? { branch } : {}),
		}));
		const paired = await pairMachine(ctx, api, { label: config.label, checkouts: wire }, pairingUi(ctx));
		credential = {
			server,
			token: paired.token,
			machineId: paired.machine.id,
			createdAt: new Date(ctx.clock.now()).toISOString(),
		};
		saveCredential(ctx, credential);
	}
	saveMachineConfig(ctx.paths, config);
	ctx.log.info({ checkout: checkout.path, repository: checkout.repository }, "checkout configured");
	warnUnmaskable(ctx, options.planner.env);
	if (!options.run) {
		ctx.stderr.write(`${noRunNextStep(await runningDaemon(ctx), checkout)}\n`);
		return;
	}
	const daemon = (await runningDaemon(ctx))?.pid;
	if (daemon !== undefined) {
		const { added } = await ipcRequest(
			{ socket: ctx.paths.socket, clock: ctx.clock, signal: ctx.signal },
			{ type: "add-checkout", path: checkout.path, repository: checkout.repository, origin: checkout.origin },
		);
		ctx.stderr.write(
			`The running chopin daemon (pid ${daemon}) ${added ? "now serves" : "already serves"} ${checkout.path} (${checkout.repository}).\n`,
		);
		// Changed Planner settings: the daemon starts its backends again under them.
		if (JSON.stringify(current?.planner) !== JSON.stringify(config.planner)) {
			await ipcRequest(
				{ socket: ctx.paths.socket, clock: ctx.clock, signal: ctx.signal },
				{ type: "reload" },
			);
			ctx.stderr.write(`The running chopin daemon (pid ${daemon}) now runs the Planner settings you gave.\n`);
		}
		return;
	}
	if (ctx.reexec) {
		// The daemon runs for days and its command line is readable by every local user: it becomes `chopin run`
		// (same pid, stdio and environment), which reads the --env values from machine.json (0600) instead.
		ctx.log.info({ checkout: checkout.path }, "becoming the daemon as `chopin run`");
		ctx.reexec([...ctx.selfCommand, "run"]);
	}
	await runDaemon(ctx);
}

/**
 * The modules only the run half needs (the daemon, pairing, git, the server API), loaded when it
 * runs: every other command, and `--help`, starts without them (docs/install.md § Start-up time).
 */
function loadRunHalf() {
	return Promise.all([
		import("../machine/credential"),
		import("../daemon/daemon"),
		import("../machine/git"),
		import("../local/ipc"),
		import("../server-link/pairing"),
		import("../server-link/pairing-ui"),
		import("../server-link/server-api"),
	]);
}

/** A stored credential the server says is revoked (or must be paired again) is replaced by a new pairing. */
async function stillPaired(ctx: CliContext, api: ServerApi, token: string): Promise<boolean> {
	try {
		await api.machine(token, PAIRING_CHECK_TIMEOUT_MS);
		return true;
	} catch (error) {
		if (!(error instanceof CliError)) throw error;
		if (error.code === "machine-revoked" || error.code === "machine-reauthorize") {
			ctx.stderr.write(
				`${api.server} no longer accepts the stored credential (${error.code}): pairing again.\n`,
			);
			return false;
		}
		if (error.code !== "server-unreachable") throw error;
		ctx.stderr.write(
			`warning: could not check the pairing with ${api.server}; keeping it. (${error.message})\n`,
		);
		return true;
	}
}

/** The running daemon's status (its pid and what it serves), or undefined when none runs. */
async function runningDaemon(ctx: CliContext): Promise<DaemonStatus | undefined> {
	const { ipcRequest } = await import("../local/ipc");
	try {
		const answer = await ipcRequest(
			{ socket: ctx.paths.socket, clock: ctx.clock, signal: ctx.signal },
			{ type: "status" },
		);
		return answer.status;
	} catch (error) {
		if (error instanceof CliError && error.code === "daemon-not-running") return undefined;
		throw error;
	}
}

/** What --no-run says last: who serves the checkout now, or what would. */
export function noRunNextStep(
	daemon: Pick<DaemonStatus, "pid" | "checkouts"> | undefined,
	checkout: Checkout,
): string {
	if (!daemon) return "Start serving with `chopin run` (or `chopin service install`).";
	if (daemon.checkouts.some((c) => c.path === checkout.path)) {
		return `The running chopin daemon (pid ${daemon.pid}) serves ${checkout.path} (${checkout.repository}).`;
	}
	return `The running chopin daemon (pid ${daemon.pid}) does not serve ${checkout.path} yet: run \`chopin connect ${checkout.path}\` (without --no-run) to hand it over.`;
}

function collect(value: string, previous: string[] | undefined): string[] {
	return [...(previous ?? []), value];
}
