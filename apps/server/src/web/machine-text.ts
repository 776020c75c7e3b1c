// Words and small rules the machine pages share: the typed pairing code, a client's description, times, and retries.
import type { MachineView, PairingView } from "./api";

/** The pairing code's form (docs/machines.md): two groups of four from an alphabet without I, O, 0 and 1. */
export const CODE_PATTERN = /^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/;

/**
 * The code as typed, in the form the server takes: capitals, spaces and dashes dropped, and the dash
 * put back once there are eight characters ("abcd 2345" → "ABCD-2345"). Anything else is left for
 * the page to refuse with a sentence rather than sent.
 */
export function normaliseCode(typed: string): string {
	const compact = typed.toUpperCase().replace(/[\s-]+/g, "");
	return compact.length === 8 ? `${compact.slice(0, 4)}-${compact.slice(4)}` : compact;
}

const INSTALLS: Record<PairingView["client"]["install"], string> = {
	npm: "installed with npm",
	pnpm: "installed with pnpm",
	yarn: "installed with yarn",
	bun: "installed with bun",
	script: "installed with the install script",
	binary: "a downloaded binary",
	source: "run from source",
};

/** "chopin 0.2.0 on linux-x64, installed with npm". */
export function describeClient(client: PairingView["client"]): string {
	return `chopin ${client.version} on ${client.os}-${client.arch}, ${INSTALLS[client.install]}`;
}

/**
 * A moment as a date and time. Absolute, not "3 minutes ago": the server's clock is the one that
 * counts, and the browser's may differ from it.
 */
export function formatTime(ms: number): string {
	return new Date(ms).toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
}

/** A moment later today as a time with seconds, for "try again at". */
export function formatClock(ms: number): string {
	return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

export function plural(n: number, one: string, many = `${one}s`): string {
	return `${n} ${n === 1 ? one : many}`;
}

/** What a 429 says to wait, in seconds: the body's retryAfter, else a minute. */
export function retrySeconds(body: Record<string, unknown> | undefined): number {
	const seconds = Number(body?.retryAfter);
	return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds) : 60;
}

/** The repositories a machine may be pinned to: those it has a checkout of (a Planner runs in a worktree of one). */
export function pinnableRepositories(machine: Pick<MachineView, "repositories">): string[] {
	return [...machine.repositories].sort((a, b) => a.localeCompare(b));
}

/** Where a confirm's `location` may send the browser: a path on this origin, never another site. */
export function isLocalPath(location: string): boolean {
	return location.startsWith("/") && !location.startsWith("//") && !location.includes("\\");
}
