// chopin started by the npm launcher's JS shim (npm/cli/bin/chopin, which sets CHOPIN_LAUNCHER_PID): chopin must not
// outlive it, and reads the SIGINT/SIGTERM it relays on fd 3 (why relayed rather than sent: interrupts.ts, and the
// launcher's header). Loaded from main.ts only when the variable is set, so a start without the launcher pays nothing.
import { relayedInterrupt } from "./interrupts";

const PR_SET_PDEATHSIG = 1;
const SIGTERM = 15;
const RELAY_FD = 3;

let joined = false;

/**
 * Whether this process joined a launcher. Such a chopin must not replace itself with an execve (`chopin connect`
 * becoming the daemon): Bun's execve closes every descriptor above 2, the relay with them, and the launcher's own
 * command line shows the same arguments anyway.
 */
export function joinedLauncher(): boolean {
	return joined;
}

/** Asks Linux for SIGTERM when the parent dies (kept across an execve); false where it cannot (no glibc, no FFI). */
function askForParentDeathSignal(): boolean {
	try {
		const { dlopen, FFIType } = require("bun:ffi") as typeof import("bun:ffi");
		const { symbols, close } = dlopen("libc.so.6", {
			prctl: {
				args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64],
				returns: FFIType.i32,
			},
		});
		const armed = symbols.prctl(PR_SET_PDEATHSIG, BigInt(SIGTERM), 0n, 0n, 0n) === 0;
		close();
		return armed;
	} catch {
		return false;
	}
}

/** Joins the launcher that started this process, if one did. */
export function joinLauncher(): void {
	const launcherPid = Number(process.env.CHOPIN_LAUNCHER_PID);
	// Not for chopin's own children: a daemon's backends are not the launcher's.
	delete process.env.CHOPIN_LAUNCHER_PID;
	if (!Number.isInteger(launcherPid) || launcherPid <= 0) return;

	if (process.platform === "linux") askForParentDeathSignal();
	// Asked after arming: a launcher that died before then left us with another parent, and no signal will come.
	if (process.ppid !== launcherPid) {
		relayedInterrupt("SIGTERM");
		return;
	}

	joined = true;
	const net = require("node:net") as typeof import("node:net");
	let relay: import("node:net").Socket;
	try {
		// Bun reads an inherited socket this way (`new net.Socket({ fd })` reads nothing); Node's types lack the form.
		relay = net.connect({ fd: RELAY_FD } as unknown as import("node:net").NetConnectOpts);
	} catch {
		return;
	}
	// Not a reason to stay alive: chopin ends when its command does.
	relay.unref();
	let pending = "";
	relay.on("data", (chunk: Buffer) => {
		pending += chunk.toString("latin1");
		for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
			const line = pending.slice(0, end);
			pending = pending.slice(end + 1);
			if (line === "SIGINT" || line === "SIGTERM") relayedInterrupt(line);
		}
	});
	// The launcher closes its end only after chopin has ended, so EOF means it died: stop as its SIGTERM would
	// (relayed, so that Linux's parent-death SIGTERM and this EOF are one interrupt).
	relay.on("end", () => relayedInterrupt("SIGTERM"));
	relay.on("error", () => {});
}
