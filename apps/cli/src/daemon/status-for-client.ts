// The daemon's half of the status-report request: the whole `chopin status [--json]`, built here with the very code the
// client would run (status-run.ts) and handed back as the client would have printed it, with its exit code.
//
// Why here: a status client that only asks and prints starts in about the time of a one-file program, while one that
// reads the files, builds the report and formats it runs that code cold every time (docs/performance.md, `chopin
// status`). The daemon has it warm, and reads the files fresh for each request, so the answer is what the client would
// have found at that moment. It declines, and the client gathers the status itself, whenever that could differ: a
// client of another version, one that looks in other places (its own paths and service definition, from its own
// environment), and a daemon that cannot yet say whose machine this is (the client asks the server then, with its own
// time limit, which the daemon's answer must not hold up).
import type { DaemonStatus, IpcAnswer, IpcRequest } from "../local/ipc";
import type { Writer } from "../program/context";
import { reportFailure } from "../program/process-run";
import { serviceDefinitionPath } from "../service/names";
import type { StatusContext } from "../status/status-report";

type Request = Extract<IpcRequest, { type: "status-report" }>;
type Answer = IpcAnswer<"status-report">;

export type StatusForClientContext = Omit<StatusContext, "stdout" | "stderr">;

export async function statusForClient(
	request: Request,
	ctx: StatusForClientContext,
	status: () => DaemonStatus,
): Promise<Answer> {
	const declined = (why: string): Answer => ({ type: "status-report", output: null, declined: why });
	if (request.version !== ctx.version) return declined(`the daemon runs chopin ${ctx.version}`);
	if (!samePaths(request.paths, ctx.paths)) return declined("the client's paths are not the daemon's");
	const definition = serviceDefinitionPath(ctx.platform, ctx.env, ctx.home, ctx.paths.stateDir);
	if (request.serviceDefinition !== definition)
		return declined("the client's service definition is not where the daemon looks");
	const own = status();
	if (!own.machine) return declined("the daemon has not heard whose machine this is yet");
	const stdout = collected();
	const stderr = collected();
	// The client's own facts where they are its own (how it was installed); everything else is the daemon's, equal
	// to the client's by the checks above.
	const statusCtx: StatusContext = {
		fetch: ctx.fetch,
		clock: ctx.clock,
		log: ctx.log,
		signal: ctx.signal,
		version: ctx.version,
		platform: ctx.platform,
		arch: ctx.arch,
		home: ctx.home,
		paths: ctx.paths,
		secrets: ctx.secrets,
		env: ctx.env,
		execPath: ctx.execPath,
		// A getter in the daemon's context too: it is the process's own, and status never asks for it.
		get selfCommand() {
			return ctx.selfCommand;
		},
		installMethod: request.installMethod,
		stdout,
		stderr,
	};
	let exitCode = 0;
	try {
		// Loaded on the first request: a daemon nobody asks never needs the report's code.
		const { runStatus } = await import("../commands/status-run");
		await runStatus({ json: request.json }, statusCtx, own);
	} catch (thrown) {
		exitCode = reportFailure(thrown, statusCtx);
	}
	return { type: "status-report", output: { stdout: stdout.text, stderr: stderr.text, exitCode } };
}

/** The same directories and files: every key of the daemon's paths, with the same value, and no other key. */
function samePaths(theirs: Record<string, string>, ours: object): boolean {
	const entries = Object.entries(ours);
	return (
		Object.keys(theirs).length === entries.length &&
		entries.every(([key, value]) => Object.hasOwn(theirs, key) && theirs[key] === value)
	);
}

function collected(): Writer & { readonly text: string } {
	let text = "";
	return {
		isTTY: false,
		write: (chunk) => {
			text += chunk;
		},
		get text() {
			return text;
		},
	};
}
