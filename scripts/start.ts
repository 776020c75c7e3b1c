// The README's first command: the Chopin server on the embedded default (SQLite in .data/,
// local accounts with the demo account), in the foreground until Ctrl-C.
// As the project grows this becomes the whole loop: server, a paired machine, a Planner backend.
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const env = {
	DATA_DIR: join(root, ".data", "demo"),
	AUTH_MODE: "local",
	DEMO: "on",
	...process.env,
};
const server = Bun.spawn(["bun", join(root, "apps/server/src/main.ts")], {
	env,
	stdio: ["inherit", "inherit", "inherit"],
});
const forward = (signal: NodeJS.Signals) => server.kill(signal);
process.on("SIGINT", forward);
process.on("SIGTERM", forward);
process.exit(await server.exited);
