import { writeFileSync } from "node:fs";
import { join } from "node:path";

// The one-file status floor the status benches time beside chopin (cli-startup.ts, status-before-after.ts): the least
// any `chopin status --json` must do, so that a figure over `bun -e 0` can be told apart from what the box itself adds
// (on an idle VM, waking the daemon alone moves the ratio: docs/performance.md). Not a test.

/**
 * The least a status can do, in one file: what the "floor" rows time. Its directories by Linux's and macOS's rules
 * (without normalising an override), the record, credential and config read, the two files hashed when there, the
 * daemon's socket tried and, when it answers, asked for its status; a short report printed; exit 3 not paired.
 */
function statusFloorSource(): string {
	return `const env = process.env;
const home = env.HOME;
const mac = process.platform === "darwin";
const data = mac ? home + "/Library/Application Support/chopin" : (env.XDG_DATA_HOME || home + "/.local/share") + "/chopin";
const configDir = mac ? home + "/Library/Preferences/chopin" : (env.XDG_CONFIG_HOME || home + "/.config") + "/chopin";
const state = env.CHOPIN_STATE_DIR || data;
const config = env.CHOPIN_CONFIG_DIR || configDir;
const read = (p) => { try { return new TextDecoder().decode(Bun.mmap(p)); } catch { return undefined; } };
const digest = (text) => text === undefined ? undefined : new Bun.CryptoHasher("sha256").update(text).digest("hex");
const record = read(state + "/checked.json");
const credential = read(state + "/credential.json");
const machine = read(config + "/machine.json");
const sums = [digest(credential), digest(machine)];
let status;
try {
  status = await new Promise((resolve, reject) => {
    let buffer = "";
    Bun.connect({ unix: state + "/chopin.sock", socket: {
      open(socket) { socket.write('{"type":"status"}\\n'); },
      data(socket, chunk) { buffer += new TextDecoder().decode(chunk); if (buffer.includes("\\n")) { socket.end(); resolve(JSON.parse(buffer).status); } },
      error(_, error) { reject(error); },
      close() { reject(new Error("closed")); },
    } }).catch(reject);
  });
} catch {}
const paired = credential !== undefined;
const report = { version: "0.0.0", record: record !== undefined, sums, credential: paired ? JSON.parse(credential) : { stored: false }, config: machine === undefined ? { configured: false } : JSON.parse(machine), daemon: status ?? { running: false }, logFile: state + "/logs/chopin.log" };
const out = Bun.stdout.writer(); out.write(JSON.stringify(report, null, 2) + "\\n"); out.flush();
if (!paired) {
  const err = Bun.stderr.writer(); err.write("error: This machine is not paired with a Chopin server.\\nhint: Run chopin connect to pair it.\\n"); err.flush();
  process.exitCode = 3;
}
`;
}

/** Writes the floor's source into `dir` and gives its path, for the bench to compile as it compiles chopin. */
export function writeStatusFloor(dir: string): string {
	const entry = join(dir, "status-floor.ts");
	writeFileSync(entry, statusFloorSource());
	return entry;
}
