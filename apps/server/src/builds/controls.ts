// A person's stop, resume or discard: an unclaimed offer is withdrawn at once; a claimed run's machine gets
// run-control now, or after its next hello when it is away (held); an answer not back within 10 s is unconfirmed.
import type { RunAction } from "@chopin/agent-link/machine";
import { randomId } from "../ids";
import { type Build, discardBuild, getBuild, heldForMachine, saveControl } from "./build-rows";
import type { BuildsCore } from "./core";
import { buildNotFound, machineOffline, notPaused } from "./errors";
import { isClaimedLive, isLiveStatus } from "./statuses";

async function found(core: BuildsCore, id: string): Promise<Build> {
	const build = await getBuild(core.deps.store, id);
	if (!build || build.discardedAt !== null) throw buildNotFound(id);
	return build;
}

/** Sends run-control now, or holds a stop or discard for an away machine (a resume cannot wait: refused). */
async function deliver(core: BuildsCore, build: Build, action: RunAction, by: string): Promise<void> {
	const { machines, store } = core.deps;
	const now = core.now();
	if (machines.online(build.machineId)) {
		const request = `ctl_${randomId(16)}`;
		if (machines.send(build.machineId, { type: "run-control", request, run: build.id, action })) {
			await saveControl(store, build.id, {
				held: null,
				request,
				control: { action, by, at: now, state: "sent" },
				now,
			});
			core.armControlTimer(build.id, request);
			return;
		}
	}
	if (action === "resume") {
		const machine = await core.viewMachine(build.machineId);
		throw machineOffline(machine.label);
	}
	core.cancelControlTimer(build.id);
	await saveControl(store, build.id, {
		held: action,
		request: null,
		control: { action, by, at: now, state: "held" },
		now,
	});
}

/** Withdraws an offer nobody claimed: it is stopped, and a claim from now on is refused run-withdrawn. */
async function withdraw(core: BuildsCore, build: Build, reason: string): Promise<void> {
	if (await core.end(build, "stopped", { reason })) {
		core.deps.machines.send(build.machineId, { type: "run-withdrawn", run: build.id });
	}
}

export function stopBuild(core: BuildsCore, id: string, by: string): Promise<Build> {
	return core.serial(id, async () => {
		const build = await found(core, id);
		// Stopping what has ended changes nothing.
		if (!isLiveStatus(build.status)) return build;
		if (build.status === "offered") {
			await withdraw(core, build, `Stopped by @${by} before its machine took it.`);
		} else {
			await deliver(core, build, "stop", by);
		}
		await core.publish(id);
		return (await getBuild(core.deps.store, id))!;
	});
}

export function resumeBuild(core: BuildsCore, id: string, by: string): Promise<Build> {
	return core.serial(id, async () => {
		const build = await found(core, id);
		if (build.status !== "paused") throw notPaused(build.status);
		await deliver(core, build, "resume", by);
		await core.publish(id);
		return (await getBuild(core.deps.store, id))!;
	});
}

/**
 * Discards a run: it leaves the document's list (its row stays), its credential stops working at once,
 * and its machine is told to stop it and drop its workspace (now, or after its next hello).
 */
export function discardRun(core: BuildsCore, id: string, by: string): Promise<void> {
	return core.serial(id, async () => {
		const build = await found(core, id);
		await discardBuild(core.deps.store, id, core.now());
		if (build.status === "offered") {
			await withdraw(core, build, `Discarded by @${by} before its machine took it.`);
		} else if (build.claimedAt !== null && build.status !== "lost") {
			await deliver(core, build, "discard", by);
		}
		core.deps.log.info("build discarded", { build: id, by });
		await core.publish(id, { removed: true });
	});
}

/**
 * A stop or discard the machine never answered: sent on a connection that then went away (its answer, or the
 * control itself, went down with it), so it is owed as a held one is. A repeat changes nothing on the machine.
 */
function owed(build: Build): "stop" | "discard" | null {
	if (build.held) return build.held;
	const control = build.control;
	if (build.controlRequest === null || !control || control.action === "resume") return null;
	return control.state === "sent" || control.state === "unconfirmed" ? control.action : null;
}

/**
 * After a hello: each held stop or discard, and each one sent on an earlier connection and never answered, goes
 * to the machine when it still holds the run (the hello listed it); one for a run it no longer holds is dropped.
 */
export async function sendHeld(
	core: BuildsCore,
	machineId: string,
	listed: ReadonlySet<string>,
): Promise<void> {
	for (const held of await heldForMachine(core.deps.store, machineId)) {
		await core.serial(held.id, async () => {
			const build = await getBuild(core.deps.store, held.id);
			const action = build && owed(build);
			if (!build || !action) return;
			const holds = listed.has(build.id) && (isClaimedLive(build.status) || build.discardedAt !== null);
			if (holds) {
				await deliver(core, build, action, build.control?.by ?? build.requestedBy);
			} else {
				await saveControl(core.deps.store, build.id, {
					held: null,
					request: null,
					control: build.control,
					now: core.now(),
				});
			}
			await core.publish(build.id);
		});
	}
}
