// A build's or investigation's statuses: what is stored, what pages show besides (the machine away), and how a
// machine's final word becomes the stored status.
import type { MachineRunStatus } from "@chopin/agent-link/machine";

/**
 * As stored. `offered`: waiting for the machine's claim. `preparing`, `running`, `paused`: as the machine
 * reports them. Final: `succeeded` and `failed` (the agent's reported outcome, or the machine said failed),
 * `blocked` (ended with only a blocker reported), `finished` (ended with nothing reported), `stopped` (a
 * person stopped it, or the machine did), `lost` (its machine no longer holds it; nothing restarts it).
 */
export const BUILD_STATUSES = [
	"offered",
	"preparing",
	"running",
	"paused",
	"succeeded",
	"failed",
	"blocked",
	"finished",
	"stopped",
	"lost",
] as const;
export type BuildStatus = (typeof BUILD_STATUSES)[number];

/** Shown besides: a live run whose machine is away (`machine-offline` until the grace ends, then `needs-decision`). */
export const BUILD_DISPLAY_STATUSES = [...BUILD_STATUSES, "machine-offline", "needs-decision"] as const;
export type BuildDisplayStatus = (typeof BUILD_DISPLAY_STATUSES)[number];

export const LIVE_BUILD_STATUSES = ["offered", "preparing", "running", "paused"] as const;
const LIVE: ReadonlySet<BuildStatus> = new Set(LIVE_BUILD_STATUSES);

export function isLiveStatus(status: BuildStatus): boolean {
	return LIVE.has(status);
}

/** Claimed and still going: the machine holds it. */
export function isClaimedLive(status: BuildStatus): boolean {
	return status === "preparing" || status === "running" || status === "paused";
}

/**
 * The stored status for a machine's final word. `finished` (the agent ended its turn) becomes the outcome
 * the agent reported, or `blocked` when it reported only a blocker, or stays `finished`; `failed` and
 * `stopped` are the machine's own.
 */
export function finalStatus(
	machineStatus: Extract<MachineRunStatus, "finished" | "failed" | "stopped">,
	reported: { outcome?: "succeeded" | "failed"; blocked: boolean },
): BuildStatus {
	if (machineStatus !== "finished") return machineStatus;
	if (reported.outcome) return reported.outcome;
	return reported.blocked ? "blocked" : "finished";
}
