// The plain `chopin status [--json]` asked of the daemon whole: find the socket, send who this client is and where it
// looks, print what the daemon built (status-for-client.ts) and end with its exit code. Nothing else is loaded: no
// context, no files, no report code (docs/performance.md, `chopin status`).
//
// Undefined means "gather it here": no daemon (or none on a Unix socket: Windows' named pipes take the full path), a
// daemon of another version or with other paths, one that cannot say whose machine this is yet, or one that does not
// answer within ANSWER_WAIT_S. status-main.ts then runs the full status, which asks the daemon again and says what is
// wrong with the same words as ever.
import type { IpcRequest } from "../local/ipc";
import { type CliPaths, type Platform, pathsFromEnvironment, toPlatform } from "../local/paths";
import { nothingAt } from "../local/socket-file";
import { connectUnix } from "../local/unix-connection";
import { EXIT } from "../program/errors";
import { onInterrupt } from "../program/interrupts";
import { processWriter } from "../program/process-writer";
import type { Shortcut } from "../program/shortcuts";
import { CLI_VERSION, detectInstallMethod } from "../program/version";
import { serviceDefinitionPath } from "../service/names";

/**
 * How long the daemon's answer is waited for before the full path asks again with its own limit (10 s, then
 * daemon-not-responding). A daemon answers in about a millisecond; Bun's socket timeouts tick in whole seconds.
 */
const ANSWER_WAIT_S = 2;

type Env = Readonly<Record<string, string | undefined>>;

interface Output {
	stdout: string;
	stderr: string;
	exitCode: number;
}

export function statusByDaemon(shortcut: Shortcut): Promise<number | undefined> {
	const platform = toPlatform(process.platform);
	if (platform === "win32") return Promise.resolve(undefined);
	const facts = {
		platform,
		env: process.env,
		cwd: process.cwd(),
		execPath: process.execPath,
		main: Bun.main,
	};
	const request = statusReportRequest(facts, shortcut.options.json);
	if (nothingAt(request.paths.socket)) return Promise.resolve(undefined);
	return askForStatus(request.paths.socket, `${JSON.stringify(request)}\n`).then((answer) => {
		if (answer === "interrupted") {
			processWriter({ fd: 2, stream: () => process.stderr }).write("error: Interrupted.\n");
			return EXIT.interrupted;
		}
		if (!answer) return undefined;
		if (answer.stdout) processWriter({ fd: 1, stream: () => process.stdout }).write(answer.stdout);
		if (answer.stderr) processWriter({ fd: 2, stream: () => process.stderr }).write(answer.stderr);
		return answer.exitCode;
	});
}

/** The request: who this client is (its version, how it was installed) and where it looks, from its environment. */
export function statusReportRequest(
	facts: { platform: Platform; env: Env; cwd: string; execPath: string; main: string },
	json: boolean,
): Omit<Extract<IpcRequest, { type: "status-report" }>, "paths"> & { paths: CliPaths } {
	const { platform, env, cwd, execPath, main } = facts;
	const { home, paths } = pathsFromEnvironment(platform, env, cwd);
	return {
		type: "status-report",
		version: CLI_VERSION,
		json,
		installMethod: detectInstallMethod({ execPath, main, platform, home }),
		paths,
		serviceDefinition: serviceDefinitionPath(platform, env, home, paths.stateDir),
	};
}

/** The daemon's output, undefined when it declined or could not be asked in time, "interrupted" on Ctrl-C. */
export function askForStatus(
	socket: string,
	request: string,
	waitSeconds = ANSWER_WAIT_S,
): Promise<Output | undefined | "interrupted"> {
	return new Promise((resolve) => {
		let buffer = "";
		let settled = false;
		const finish = (result: Output | undefined | "interrupted") => {
			if (settled) return;
			settled = true;
			stopListening();
			// Closed even when it is not open yet: it is ended as it opens (unix-connection.ts).
			connection.close();
			resolve(result);
		};
		// Before connecting: a Ctrl-C that comes as the daemon accepts is not lost (then the default would kill the
		// process without a word).
		const stopListening = onInterrupt(() => finish("interrupted"));
		const connection = connectUnix(
			socket,
			{
				open: () => connection.write(request),
				data: (text) => {
					buffer += text;
					const newline = buffer.indexOf("\n");
					if (newline >= 0) finish(outputOf(buffer.slice(0, newline)));
				},
				timeout: () => finish(undefined),
				error: () => finish(undefined),
				close: () => finish(undefined),
			},
			{ timeoutSeconds: waitSeconds },
		);
	});
}

/** The answer's output when it is a status-report with one, checked by hand (zod would cost this client more). */
function outputOf(line: string): Output | undefined {
	let answer: unknown;
	try {
		answer = JSON.parse(line);
	} catch {
		return undefined;
	}
	const { type, output } = (answer ?? {}) as { type?: unknown; output?: Partial<Output> | null };
	if (type !== "status-report" || typeof output !== "object" || output === null) return undefined;
	const { stdout, stderr, exitCode } = output;
	if (typeof stdout !== "string" || typeof stderr !== "string" || !Number.isInteger(exitCode))
		return undefined;
	return { stdout, stderr, exitCode: exitCode as number };
}
