// Where paired machines meet the agent endpoint: a machine's chopin_p_ Planner credential attaches its document,
// a revoked machine or a withdrawn document ends the link it holds, and an @chopin message with no attached
// Planner asks the author's machine to start one. Neither domain imports the other; this wires them.
import { PLANNER_CREDENTIAL_PATTERN } from "@chopin/agent-link";
import type { PlannerService, StartAnswer } from "./agent/planner-service";
import { wording } from "./agent/wording";
import type { Withdrawal } from "./machines/assignments";
import type { Machines } from "./machines/service";

/** Connects the two; returns what undoes it (the server is stopping). */
export function connectMachinesToPlanner(machines: Machines, planner: PlannerService): () => void {
	const offs = [
		planner.resolvers.add({
			name: "machine",
			async resolve(token) {
				if (!PLANNER_CREDENTIAL_PATTERN.test(token)) return null;
				const found = await machines.verifyPlannerCredential(token);
				// Unknown, expired or revoked: the account resolver, asked last, refuses it (401) unsent to GitHub.
				if (!found) return null;
				return {
					kind: "machine",
					login: found.login,
					authorization: found.authorization,
					documentId: found.documentId,
					machineId: found.machineId,
				};
			},
		}),
		machines.onRevoked((machineId, reason) => {
			planner.closeLinks(
				{ machineId },
				{
					code: "access-revoked",
					message: (login) =>
						reason === "revoked" ? wording.machineRevoked(login) : wording.machineReauthorize(login),
				},
			);
		}),
		machines.onWithdrawn((withdrawal) => {
			planner.closeLinks(
				{ documentId: withdrawal.documentId, machineId: withdrawal.machineId },
				{ code: "access-revoked", message: (login) => withdrawnMessage(withdrawal, login) },
			);
		}),
		// A Planner replying, or waiting on a question or a live or paused run (disconnected included), is using
		// its document: it is never withdrawn as unused meanwhile.
		machines.addBusyCheck((documentId) => planner.using(documentId)),
		planner.setStarter({
			enabled: () => machines.planners.enabled(),
			async start(documentId, by): Promise<StartAnswer> {
				const request = await machines.requestPlanner(documentId, { by });
				if (request.status === "assigned") return { status: "starting", login: request.login };
				if (request.status === "offline") return { status: "offline", login: request.login };
				return { status: "none" };
			},
			failing(documentId) {
				const activity = machines.plannerActivity(documentId);
				if (!activity || activity.exitsInRow < 2) return undefined;
				return { login: activity.login, reason: activity.reason ?? `its Planner backend ${activity.event}` };
			},
			attached: (documentId) => machines.plannerAttached(documentId),
			used: (documentId) => machines.markUsed(documentId),
		}),
	];
	return () => {
		for (const off of offs.splice(0)) off();
	};
}

function withdrawnMessage(withdrawal: Withdrawal, login: string): string {
	const reason =
		withdrawal.reason === "moved" || withdrawal.reason === "unused" || withdrawal.reason === "access-lost"
			? withdrawal.reason
			: "other";
	return wording.machineWithdrawn(login, reason);
}
