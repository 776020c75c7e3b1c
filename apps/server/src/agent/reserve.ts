// Finding the document's Planner for a request that asks it something (an @chopin message, an invoke_planner call),
// as the spec's "Without an attached Planner" says: a stale link closed, a machine asked to start one and the wait
// for it, the refusal sentences, planner-busy; and the Planner reserved (busy) for the caller's turn.
import type { Clock } from "@chopin/agent-link/clock";
import { accessDeps, actingAuthorization } from "./access";
import type { AttachedPlanner } from "./attached";
import type { AgentDeps } from "./deps";
import { documentUrl } from "./document-ref";
import type { PlannerStarter } from "./planner-service";
import { wording } from "./wording";

export type Refusal = {
	status: "refused";
	code: "planner-not-attached" | "planner-busy" | "planner-forbidden";
	message: string;
};

export interface ReserveDeps {
	deps: AgentDeps;
	attached(documentId: string): AttachedPlanner | undefined;
	holder(documentId: string): { state: string; login: string } | undefined;
	starter(): PlannerStarter | undefined;
	waiters: AttachWaiters;
	/** Whether the document's Planner is inside a restart's hand-over window, its client not back yet. */
	inHandover(documentId: string): boolean;
	/** The Planner's state for pages changed (it is working now). */
	publish(documentId: string): void;
}

/** Requests waiting for a document's Planner to attach while a machine starts it. */
export class AttachWaiters {
	readonly #waiting = new Map<string, Set<() => void>>();

	constructor(private readonly clock: Clock) {}

	/** Resolves once wake(documentId) is called or after waitMs, with what current() then says. */
	wait<T>(documentId: string, waitMs: number, current: () => T): Promise<T> {
		if (waitMs === 0) return Promise.resolve(current());
		return new Promise((resolve) => {
			const waiters = this.#waiting.get(documentId) ?? new Set<() => void>();
			this.#waiting.set(documentId, waiters);
			const wake = () => {
				timer.cancel();
				waiters.delete(wake);
				if (waiters.size === 0 && this.#waiting.get(documentId) === waiters) this.#waiting.delete(documentId);
				resolve(current());
			};
			const timer = this.clock.setTimeout(wake, waitMs);
			waiters.add(wake);
		});
	}

	wake(documentId: string): void {
		const waiters = this.#waiting.get(documentId);
		this.#waiting.delete(documentId);
		for (const wake of [...(waiters ?? [])]) wake();
	}

	wakeAll(): void {
		for (const documentId of [...this.#waiting.keys()]) this.wake(documentId);
	}
}

/**
 * The document's Planner, reserved (busy) for the caller's turn, or the refusal to answer with. `by` is who
 * asks: their chosen machine is asked to start a Planner when none is attached. `check` may refuse the
 * Planner found (before it is reserved).
 */
export async function reservePlanner(
	r: ReserveDeps,
	documentId: string,
	by: string,
	check?: (planner: AttachedPlanner) => Refusal | undefined,
): Promise<{ ok: true; planner: AttachedPlanner } | { ok: false; refusal: Refusal }> {
	let planner = r.attached(documentId);
	// A stale link (its owner's sign-in ended unnoticed) is closed, and the request refused as without one.
	if (planner && !actingAuthorization(accessDeps(r.deps), planner.owner)) {
		planner.link.refuse("sign-in-required", wording.signInEnded(planner.login, r.deps.config.publicUrl));
		planner = undefined;
	}
	if (!planner) {
		const started = await startOnMachine(r, documentId, by);
		if (!started.ok) return started;
		planner = started.planner;
	}
	r.starter()?.used(documentId);
	const refused = check?.(planner);
	if (refused) return { ok: false, refusal: refused };
	if (planner.busy) {
		return { ok: false, refusal: { status: "refused", code: "planner-busy", message: wording.busy() } };
	}
	planner.busy = true;
	r.publish(documentId);
	return { ok: true, planner };
}

/**
 * No Planner is attached to the document: a machine of the asker's is asked to start one, and the request
 * waits up to PLANNER_CONNECT_WAIT_MS for it to attach (spec: Without an attached Planner). Otherwise the
 * refusal says why, in the spec's words.
 */
async function startOnMachine(
	r: ReserveDeps,
	documentId: string,
	by: string,
): Promise<{ ok: true; planner: AttachedPlanner } | { ok: false; refusal: Refusal }> {
	const refuse = (message: string) => ({
		ok: false as const,
		refusal: { status: "refused" as const, code: "planner-not-attached" as const, message },
	});
	const holder = r.holder(documentId);
	if (holder?.state === "disconnected" && r.inHandover(documentId)) {
		return refuse(wording.stillConnectingHandover(holder.login));
	}
	// Stepped away within its grace period, or dropped with its work kept: nothing is kept for it.
	if (holder?.state === "grace" || holder?.state === "disconnected")
		return refuse(wording.machineOffline(holder.login));
	const starter = r.starter();
	if (!starter?.enabled()) {
		// No paired machines here: the sentence names the document URL to connect a client to.
		const document = await r.deps.domain.documents.get(documentId);
		return refuse(
			wording.notAttached(documentUrl(r.deps.config.publicUrl, document.id), document.repository),
		);
	}
	const failing = starter.failing(documentId);
	const answer = await starter.start(documentId, by);
	if (answer.status === "offline") return refuse(wording.machineOffline(answer.login));
	if (answer.status === "none") return refuse(wording.connectMachine());
	// Exiting before attaching again and again: say why now rather than after another wait.
	if (failing) return refuse(wording.cantConnect(failing.login, failing.reason));
	const planner =
		r.attached(documentId) ??
		(await r.waiters.wait(documentId, r.deps.config.plannerConnectWaitMs, () => r.attached(documentId)));
	if (planner) return { ok: true, planner };
	const failed = starter.failing(documentId);
	return refuse(
		failed ? wording.cantConnect(failed.login, failed.reason) : wording.stillConnecting(answer.login),
	);
}
