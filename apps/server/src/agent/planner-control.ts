// Stop Planner and Resume Planner pressed on the document page (see control.ts for the requests and Chat
// notices): Stop aborts the running turn and withdraws questions a Planner only waits on; on a disconnected
// Planner a Stop is owed for its return, a Resume is not held, and Stop on one that only waits on questions
// withdraws them and ends what its link kept.
import type { AttachedPlanner } from "./attached";
import type { PlannerParts } from "./confirm";
import type { ControlAction } from "./control";
import { wording } from "./wording";

export function pressControl(
	host: PlannerParts,
	documentId: string,
	action: ControlAction,
	by: string,
): { sent: number } | null {
	const held = host.held.get(documentId);
	if (held) return controlHeld(host, held, action, by);
	const planner = host.attached.get(documentId);
	if (!planner) return controlRestored(host, documentId, action, by);
	const running = planner.runningTurns();
	const sessions = planner.sessions.live().filter((s) => s.state === "started");
	if (action === "stop") {
		for (const turn of running) turn.abort();
		// A Planner that only waits on questions: Stop withdraws them (answered cancelled).
		if (running.length === 0 && planner.questions.openCount > 0 && sessions.every((s) => !s.holdsRuns)) {
			for (const session of sessions) void planner.questions.endSession(session);
		}
	}
	return { sent: planner.controls.press(action, by, sessions) };
}

/**
 * Stop or Resume while the link is down: a Stop is owed for its return, a Resume is not held. Stop on a
 * Planner that only waits on questions withdraws them, which ends what the link kept (grace follows).
 */
function controlHeld(
	host: PlannerParts,
	held: AttachedPlanner,
	action: ControlAction,
	by: string,
): { sent: number } {
	const sessions = held.sessions.live().filter((s) => s.state === "started");
	if (action === "stop" && sessions.every((s) => !s.holdsRuns)) {
		const documentId = held.document.id;
		host.held.delete(documentId);
		void host.deps.domain.chat
			.postNotice(documentId, wording.stopWithdrewQuestions(by))
			.catch((error: unknown) => host.deps.log.error("control notice not posted", { error }));
		host.ownership.leave(documentId, null, "grace");
		host.teardown(held);
		host.handover.forget(documentId);
		return { sent: 0 };
	}
	held.controls.press(action, by, sessions, true);
	if (action === "stop") host.handover.persist(held, false);
	return { sent: 0 };
}

/**
 * Stop or Resume on a hold the last process wrote that its client has not taken yet (a restart's): the same
 * rules as on a disconnected Planner, kept in the hold's row for the client's resume.
 */
function controlRestored(
	host: PlannerParts,
	documentId: string,
	action: ControlAction,
	by: string,
): { sent: number } | null {
	const outcome = host.handover.press(documentId, action, by);
	if (!outcome) return null;
	const notice =
		outcome === "withdrawn"
			? wording.stopWithdrewQuestions(by)
			: action === "stop"
				? wording.stopHeld(by)
				: wording.resumeNotHeld(by);
	void host.deps.domain.chat
		.postNotice(documentId, notice)
		.catch((error: unknown) => host.deps.log.error("control notice not posted", { error }));
	if (outcome === "withdrawn") host.ownership.leave(documentId, null, "grace");
	return { sent: 0 };
}
