// The README's first command: the whole loop on the embedded default. The Chopin server (SQLite in .data/demo, local
// accounts with the demo account and document made on first run), a machine paired through the real pairing flow
// with the example Planner backend, and one @chopin message answered; then both stay up until Ctrl-C.
// CHOPIN_DEMO_MACHINE=off runs the server alone; so does a custom AUTH_MODE or LOCAL_ACCOUNTS.
import { join } from "node:path";
import { lines } from "./demo/lines";
import { type DemoMachine, startDemoMachine } from "./demo/machine";

const root = join(import.meta.dir, "..");
const dataDir = process.env.DATA_DIR ?? join(root, ".data", "demo");
const env: Record<string, string | undefined> = {
	DATA_DIR: dataDir,
	AUTH_MODE: "local",
	DEMO: "on",
	// The demo machine's Planner asks for Planner credentials, which local mode issues only when told.
	LOCAL_PLANNER_CREDENTIALS: "on",
	...process.env,
};
/** The default LOCAL_ACCOUNTS holds the demo account (no password); a custom one names its own. */
const demoAccount = env.AUTH_MODE === "local" && !env.LOCAL_ACCOUNTS?.trim() ? "demo" : undefined;
const withMachine = demoAccount !== undefined && env.CHOPIN_DEMO_MACHINE !== "off";

const server = Bun.spawn(["bun", join(root, "apps/server/src/main.ts")], {
	env,
	stdio: ["inherit", "pipe", "inherit"],
});
let machine: DemoMachine | undefined;
let stopping = false;
const stop = async (signal: NodeJS.Signals) => {
	if (stopping) return;
	stopping = true;
	// The machine first: its daemon stops the backend's process group before the server goes.
	await machine?.stop();
	server.kill(signal);
};
process.on("SIGINT", () => void stop("SIGINT"));
process.on("SIGTERM", () => void stop("SIGTERM"));

const say = (line: string) => process.stdout.write(`${line}\n`);

async function runMachine(url: string): Promise<void> {
	say("\nStarting the demo machine (chopin connect with the example Planner backend)...");
	try {
		machine = await startDemoMachine({
			root,
			url,
			dataDir,
			say,
			daemonOutput: (line) => process.stderr.write(`[machine] ${line}\n`),
		});
		if (stopping) return void (await machine.stop());
		say(`\nThe demo machine's Planner answered in Chat:\n\n  ${machine.reply.split("\n").join("\n  ")}\n`);
		say(`Open ${url}/d/${machine.documentId} and sign in as "demo" (no password) to talk to it.`);
		say("Press Ctrl-C to stop the machine and the server.\n");
	} catch (error) {
		say(`\nThe demo machine did not answer: ${(error as Error).message}`);
		say(`The server keeps running at ${url}/. Press Ctrl-C to stop it.\n`);
	}
}

await lines(server.stdout, (line) => {
	process.stdout.write(`${line}\n`);
	const url = /^Chopin is running at (\S+)$/.exec(line)?.[1];
	if (!url) return;
	process.stdout.write(`\nOpen ${url}/ in your browser`);
	process.stdout.write(demoAccount ? ` and sign in as "${demoAccount}" (no password).\n` : ".\n");
	if (demoAccount) process.stdout.write('The demo document "Welcome to Chopin" is in demo/score.\n');
	if (withMachine) void runMachine(url);
	else process.stdout.write("Press Ctrl-C to stop.\n\n");
});
const code = await server.exited;
await machine?.stop();
process.exit(code);
