// The README's first command: the Chopin server on the embedded default (SQLite in .data/,
// local accounts with the demo account and document made on first run), in the foreground until
// Ctrl-C. It prints the URL to open and the account to sign in with.
// As the project grows this becomes the whole loop: server, a paired machine, a Planner backend.
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const env: Record<string, string | undefined> = {
	DATA_DIR: join(root, ".data", "demo"),
	AUTH_MODE: "local",
	DEMO: "on",
	...process.env,
};
const server = Bun.spawn(["bun", join(root, "apps/server/src/main.ts")], {
	env,
	stdio: ["inherit", "pipe", "inherit"],
});
const forward = (signal: NodeJS.Signals) => server.kill(signal);
process.on("SIGINT", forward);
process.on("SIGTERM", forward);

/** The default LOCAL_ACCOUNTS holds the demo account (no password); a custom one names its own. */
const demoAccount = env.AUTH_MODE === "local" && !env.LOCAL_ACCOUNTS?.trim() ? "demo" : undefined;

const decoder = new TextDecoder();
let pending = "";
for await (const chunk of server.stdout) {
	pending += decoder.decode(chunk, { stream: true });
	let at = pending.indexOf("\n");
	while (at >= 0) {
		const line = pending.slice(0, at);
		pending = pending.slice(at + 1);
		process.stdout.write(`${line}\n`);
		const url = /^Chopin is running at (\S+)$/.exec(line)?.[1];
		if (url) {
			process.stdout.write(`\nOpen ${url}/ in your browser`);
			process.stdout.write(demoAccount ? ` and sign in as "${demoAccount}" (no password).\n` : ".\n");
			if (demoAccount) process.stdout.write('The demo document "Welcome to Chopin" is in demo/score.\n');
			process.stdout.write("Press Ctrl-C to stop.\n\n");
		}
		at = pending.indexOf("\n");
	}
}
process.exit(await server.exited);
