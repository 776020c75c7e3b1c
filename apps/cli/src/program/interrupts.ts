// Ctrl-C and SIGTERM as one stream of interrupts for the command that runs (process-run.ts), counted so that an
// interrupt that reaches chopin twice is one: directly and relayed by the npm launcher (launcher-link.ts).
//
// A terminal's Ctrl-C, a `kill -- -<pgid>` or a cgroup stop reach both the launcher and chopin; a `kill -INT` of the
// launcher reaches the launcher alone. The launcher relays every SIGINT/SIGTERM it gets, and chopin sees
// max(received directly, relayed) interrupts: never two for one, so a second one still means "now". Without the
// launcher nothing is relayed and every signal is one interrupt, as before.

type Listener = () => void;

const listeners = new Set<Listener>();
let direct = 0;
let relayed = 0;
let delivered = 0;

function deliver(): void {
	while (delivered < Math.max(direct, relayed)) {
		delivered++;
		for (const listener of [...listeners]) listener();
	}
}

function onDirect(): void {
	direct++;
	deliver();
}

/** Calls `listener` on each interrupt (SIGINT or SIGTERM) until the returned function is called. */
export function onInterrupt(listener: Listener): () => void {
	if (listeners.size === 0) {
		process.on("SIGINT", onDirect);
		process.on("SIGTERM", onDirect);
	}
	listeners.add(listener);
	return () => {
		listeners.delete(listener);
		if (listeners.size > 0) return;
		process.off("SIGINT", onDirect);
		process.off("SIGTERM", onDirect);
	};
}

/**
 * An interrupt the launcher relays. One that already came directly is nothing new, even once nobody listens any more
 * (a group's SIGTERM ended the command, then its relayed copy arrived: the process was ending by its first one).
 * Otherwise, with nobody listening, the signal's own default: chopin ends by it.
 */
export function relayedInterrupt(signal: "SIGINT" | "SIGTERM"): void {
	relayed++;
	if (relayed <= delivered) return;
	if (listeners.size === 0) {
		process.kill(process.pid, signal);
		return;
	}
	deliver();
}
