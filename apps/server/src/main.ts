// The one entry: reads the environment, starts the server, stops it gracefully on SIGINT/SIGTERM.
// Exit codes: 0 after a clean stop, 1 when the server cannot start, 2 for a bad environment variable.
import { type Config, ConfigError, loadConfig } from "./config";
import { readEnvFiles } from "./env-files";
import { type RunningServer, startServer } from "./server";
import { StoreError } from "./store/errors";

/** One line for a person: the message, then the hint when there is one. */
function line(error: { message: string; hint?: string }): string {
	return `${error.message}${error.hint ? ` ${error.hint}` : ""}`.replace(/\s*\n\s*/g, " ");
}

async function main(): Promise<void> {
	let config: Config;
	try {
		config = loadConfig(readEnvFiles(process.env));
	} catch (error) {
		if (!(error instanceof ConfigError)) throw error;
		process.stderr.write(`${line(error)}\n`);
		process.exit(2);
	}

	let server: RunningServer;
	try {
		server = await startServer(config);
	} catch (error) {
		if (error instanceof ConfigError) {
			process.stderr.write(`${line(error)}\n`);
			process.exit(2);
		}
		if (error instanceof StoreError) {
			process.stderr.write(`${line(error)}\n`);
			process.exit(1);
		}
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "EADDRINUSE" || code === "EACCES") {
			const reason = code === "EADDRINUSE" ? "another process is using that port" : "permission denied";
			process.stderr.write(
				`Chopin cannot listen on ${config.host}:${config.port}: ${reason}. Set PORT or HOST.\n`,
			);
			process.exit(1);
		}
		throw error;
	}

	process.stdout.write(`Chopin is running at ${server.context.config.publicUrl}\n`);

	let signals = 0;
	const shutdown = (signal: NodeJS.Signals) => {
		signals += 1;
		// A second Ctrl-C means "now": skip the graceful part.
		if (signals > 1) process.exit(130);
		server.context.log.info("signal received", { signal });
		server.stop().then(
			() => process.exit(0),
			(error: unknown) => {
				server.context.log.error("stop failed", { error });
				process.exit(1);
			},
		);
	};
	process.on("SIGINT", shutdown);
	process.on("SIGTERM", shutdown);
}

await main();
