// A machine's side of its runs: the claim answered with a credential exactly once, statuses and log lines, and what
// a hello means (an unclaimed offer is sent again; a claimed run it no longer lists is lost, never offered again).
import type { MachineClientMessage, MachineRunStatus, RunState } from "@chopin/agent-link/machine";
import {
	type Build,
	claimBuild,
	findByControlRequest,
	getBuild,
	liveForMachine,
	saveControl,
	setLiveStatus,
} from "./build-rows";
import type { BuildsCore } from "./core";
import { newRunCredential, runCredentialDigest } from "./credentials";
import { appendLog } from "./log-lines";
import { offerOf } from "./start";
import { finalStatus, isClaimedLive } from "./statuses";

type RunMessage = Extract<
	MachineClientMessage,
	{ type: "run-claim" | "run-status" | "run-log" | "run-control-result" }
>;
type StatusMessage = Extract<RunMessage, { type: "run-status" }>;

export const LOST_REASON =
	"Its machine no longer holds this run (its chopin restarted), so it was lost. Nothing restarts it by itself: start it again if it is still needed.";

export async function handleRunMessage(
	core: BuildsCore,
	machineId: string,
	message: RunMessage,
): Promise<void> {
	switch (message.type) {
		case "run-claim":
			return core.serial(message.run, () => claim(core, machineId, message.run));
		case "run-status":
			return core.serial(message.run, () => status(core, machineId, message));
		case "run-log":
			return core.serial(message.run, async () => {
				const build = await getBuild(core.deps.store, message.run);
				if (!build || build.machineId !== machineId || build.claimedAt === null) return;
				core.publishLog(build, await appendLog(core.deps.store, build.id, message.entries));
			});
		case "run-control-result": {
			const found = await findByControlRequest(core.deps.store, message.request);
			if (!found || found.machineId !== machineId) return;
			return core.serial(found.id, async () => {
				const build = await getBuild(core.deps.store, found.id);
				if (!build?.control || build.controlRequest !== message.request) return;
				core.cancelControlTimer(build.id);
				await saveControl(core.deps.store, build.id, {
					held: build.held,
					request: null,
					control: {
						...build.control,
						state: message.ok ? "confirmed" : "refused",
						...(message.message !== undefined && { message: message.message }),
					},
					now: core.now(),
				});
				await core.publish(build.id);
			});
		}
	}
}

async function claim(core: BuildsCore, machineId: string, runId: string): Promise<void> {
	const { store, machines, log } = core.deps;
	const token = newRunCredential();
	// One conditional UPDATE: of any number of claims, exactly one finds the run offered.
	if (await claimBuild(store, runId, machineId, runCredentialDigest(token), core.now())) {
		machines.send(machineId, { type: "run-claimed", run: runId, token });
		log.info("build claimed", { build: runId, machine: machineId });
		await core.publish(runId);
		return;
	}
	const build = await getBuild(store, runId);
	const refuse = (code: "run-taken" | "run-withdrawn" | "run-not-found", message: string) =>
		machines.send(machineId, { type: "run-refused", run: runId, code, message });
	if (!build || build.machineId !== machineId) {
		refuse("run-not-found", "There is no such run for this machine.");
	} else if (build.claimedAt === null) {
		refuse("run-withdrawn", "This run was stopped or discarded before the machine took it.");
	} else {
		refuse("run-taken", "This run was already claimed, and a claimed run is never handed out again.");
	}
}

async function status(core: BuildsCore, machineId: string, message: StatusMessage): Promise<void> {
	const build = await getBuild(core.deps.store, message.run);
	if (!build || build.machineId !== machineId) return;
	await applyStatus(core, build, message.status, {
		...(message.reason !== undefined && { reason: message.reason }),
		...(message.workspace && { workspace: message.workspace }),
	});
}

/**
 * The machine's word on a claimed run that is not final: a live status as it says, a final one ends it (the
 * agent's reported result or blocker decide what `finished` becomes). A final run stays as it ended.
 */
async function applyStatus(
	core: BuildsCore,
	build: Build,
	machineStatus: MachineRunStatus,
	fields: { reason?: string; workspace?: Build["workspace"] },
): Promise<void> {
	if (!isClaimedLive(build.status)) return;
	let changed: boolean;
	if (machineStatus === "preparing" || machineStatus === "running" || machineStatus === "paused") {
		changed = await setLiveStatus(core.deps.store, build.id, {
			status: machineStatus,
			...fields,
			now: core.now(),
		});
	} else {
		const ended = finalStatus(machineStatus, {
			outcome: build.result?.outcome,
			blocked: build.blocker !== null,
		});
		changed = await core.end(build, ended, fields);
		if (changed) core.deps.log.info("build ended", { build: build.id, status: ended });
	}
	if (changed) await core.publish(build.id);
}

/** A report's run as the machine holds it: its status when it differs, its workspace when not known yet. */
async function applyListed(core: BuildsCore, build: Build, listed: RunState): Promise<void> {
	const workspace =
		build.workspace === null && listed.branch ? { path: listed.worktree, branch: listed.branch } : undefined;
	if (listed.status === build.status && !workspace) return;
	if (listed.status === build.status) {
		await setLiveStatus(core.deps.store, build.id, {
			status: build.status,
			...(build.reason !== null && { reason: build.reason }),
			workspace,
			now: core.now(),
		});
		await core.publish(build.id);
		return;
	}
	await applyStatus(core, build, listed.status, workspace ? { workspace } : {});
}

/**
 * A hello: the complete list of the runs the machine holds. An offer it has not claimed goes again; a
 * claimed run it lists takes its reported status (paused after a drop, until a person resumes it); a
 * claimed run it does not list is lost, with a sentence saying so, and is never offered again.
 */
export async function machineHello(core: BuildsCore, machineId: string, runs: RunState[]): Promise<void> {
	const listed = new Map(runs.map((r) => [r.id, r]));
	for (const live of await liveForMachine(core.deps.store, machineId)) {
		await core.serial(live.id, async () => {
			const build = await getBuild(core.deps.store, live.id);
			if (!build) return;
			const held = listed.get(build.id);
			if (build.status === "offered") {
				const offer = held ? undefined : await offerOf(core, build);
				if (offer) core.deps.machines.send(machineId, offer);
				return;
			}
			if (!isClaimedLive(build.status)) return;
			if (held) return applyListed(core, build, held);
			if (await core.end(build, "lost", { reason: LOST_REASON })) {
				core.deps.log.info("build lost: its machine no longer holds it", {
					build: build.id,
					machine: machineId,
				});
				await core.publish(build.id);
			}
		});
	}
}

/** A report: the runs it lists take their reported status. A run it leaves out is not lost (only a hello says so). */
export async function machineReport(core: BuildsCore, machineId: string, runs: RunState[]): Promise<void> {
	for (const listed of runs) {
		await core.serial(listed.id, async () => {
			const build = await getBuild(core.deps.store, listed.id);
			if (!build || build.machineId !== machineId) return;
			await applyListed(core, build, listed);
		});
	}
}

/** The machine was revoked: what it held is lost (its credentials already stop working). */
export async function machineRevoked(core: BuildsCore, machineId: string, owner: string): Promise<void> {
	for (const live of await liveForMachine(core.deps.store, machineId)) {
		await core.serial(live.id, async () => {
			const build = await getBuild(core.deps.store, live.id);
			if (!build) return;
			const reason = `@${owner}'s machine was disconnected from Chopin, so this run was lost. Start it again if it is still needed.`;
			if (await core.end(build, "lost", { reason })) await core.publish(build.id);
		});
	}
}
