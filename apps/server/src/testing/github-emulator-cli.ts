// Runs the GitHub emulator on its own, so a person can run the Chopin server in GitHub mode on
// one machine: `bun apps/server/src/testing/github-emulator-cli.ts --fixture path.json`.
import { parseArgs } from "node:util";
import { type GitHubEmulator, startGitHubEmulator } from "./github-emulator";
import { EmulatorError } from "./github-emulator-errors";
import { loadFixtureFile } from "./github-fixture";

export const USAGE = `Usage: bun apps/server/src/testing/github-emulator-cli.ts --fixture <path.json> [--port 9000] [--host 127.0.0.1]

Starts the GitHub emulator and prints the variables that point the Chopin server at it.
  --fixture  the apps, users, tokens and repositories to emulate (see github-fixture.example.json)
  --port     the port to listen on (default 9000; 0 picks a free one)
  --host     the address to listen on (default 127.0.0.1)`;

export interface CliOptions {
	fixturePath: string;
	port: number;
	host: string;
}

export class CliUsageError extends Error {}

/** argv (without the runtime and script) to options; throws CliUsageError with a sentence to print. */
export function parseCliArgs(argv: string[]): CliOptions | "help" {
	let values: { fixture?: string; port?: string; host?: string; help?: boolean };
	try {
		({ values } = parseArgs({
			args: argv,
			options: {
				fixture: { type: "string" },
				port: { type: "string" },
				host: { type: "string" },
				help: { type: "boolean", short: "h" },
			},
			strict: true,
			allowPositionals: false,
		}));
	} catch (err) {
		throw new CliUsageError((err as Error).message);
	}
	if (values.help) return "help";
	if (!values.fixture) throw new CliUsageError("--fixture is required.");
	const port = values.port === undefined ? 9000 : Number(values.port);
	if (!Number.isInteger(port) || port < 0 || port > 65535) {
		throw new CliUsageError(`--port must be an integer from 0 to 65535 (got "${values.port}").`);
	}
	return { fixturePath: values.fixture, port, host: values.host ?? "127.0.0.1" };
}

export interface CliIo {
	stdout(line: string): void;
	stderr(line: string): void;
	/** Resolves with the signal's name when the process is asked to stop. */
	stopRequested: Promise<string>;
}

/**
 * Starts the emulator, prints where it is, and stops it when asked. The client secret is never
 * printed: the server's operator copies it from the fixture. Returns the exit code.
 */
export async function runCli(options: CliOptions, io: CliIo): Promise<number> {
	let emulator: GitHubEmulator;
	try {
		const fixture = loadFixtureFile(options.fixturePath);
		emulator = await startGitHubEmulator({ fixture, port: options.port, hostname: options.host });
	} catch (err) {
		if (err instanceof EmulatorError) {
			io.stderr(`error [${err.code}]: ${err.message}`);
			for (const detail of err.details) io.stderr(`  ${detail}`);
			if (err.hint) io.stderr(`hint: ${err.hint}`);
			return 2;
		}
		if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") {
			io.stderr(`error [port-in-use]: Port ${options.port} on ${options.host} is already in use.`);
			io.stderr("hint: Pass another --port, or --port 0 for any free one.");
			return 1;
		}
		throw err;
	}
	const env = emulator.env();
	io.stdout("AUTH_MODE=github");
	io.stdout(`GITHUB_URL=${env.GITHUB_URL}`);
	io.stdout(`GITHUB_API_URL=${env.GITHUB_API_URL}`);
	io.stdout(`GITHUB_CLIENT_ID=${env.GITHUB_CLIENT_ID}`);
	io.stdout(`# GITHUB_CLIENT_SECRET: see the fixture (apps[0].clientSecret in ${options.fixturePath})`);
	io.stderr(
		`GitHub emulator listening on ${emulator.url} (API ${emulator.apiUrl}, control ${emulator.url}/_emulator/).`,
	);
	io.stderr("Stop it with Ctrl-C.");
	const signal = await io.stopRequested;
	await emulator.stop();
	const unexpected = emulator.unexpected();
	if (unexpected.length > 0) {
		io.stderr(`The emulator received ${unexpected.length} call(s) it does not emulate:`);
		for (const r of unexpected) io.stderr(`  ${r.method} ${r.path}`);
	}
	io.stderr(`GitHub emulator stopped (${signal}).`);
	return 0;
}

async function main(argv: string[]): Promise<number> {
	const stdout = (line: string) => process.stdout.write(`${line}\n`);
	const stderr = (line: string) => process.stderr.write(`${line}\n`);
	let options: CliOptions | "help";
	try {
		options = parseCliArgs(argv);
	} catch (err) {
		if (!(err instanceof CliUsageError)) throw err;
		stderr(`error [usage]: ${err.message}`);
		stderr(USAGE);
		return 2;
	}
	if (options === "help") {
		stdout(USAGE);
		return 0;
	}
	const stopRequested = new Promise<string>((resolve) => {
		for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => resolve(signal));
	});
	return runCli(options, { stdout, stderr, stopRequested });
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
