// The hook Chat calls for an @chopin message, and the Planner's status for pages. This default has no
// attached Planner: every message is refused with the spec's wording. The agent endpoint replaces it.
import type { MessageView } from "../chat/message-view";
import type { PlannerStatusEvent } from "../live/events";

/** An @chopin message a person sent in a document's Chat. */
export interface PlannerMessage {
	readonly documentId: string;
	/** owner/name of the document's repository. */
	readonly repository: string;
	/** The document's URL on PUBLIC_URL, e.g. https://chopin.example/d/<id>. */
	readonly documentUrl: string;
	readonly author: string;
	readonly body: string;
}

/**
 * What became of the message. Accepted: it was stored (through `post`) and the Planner has it.
 * Refused: nothing was stored or kept for later; the sender is shown `message`.
 */
export type PlannerReply =
	| { readonly accepted: true; readonly message: MessageView }
	| { readonly accepted: false; readonly code: string; readonly message: string };

/** Whether the document has a Planner, as pages show it (the planner.status event without its type). */
export type PlannerStatus = Omit<PlannerStatusEvent, "type" | "documentId">;

export interface PlannerService {
	/**
	 * Hands an @chopin message to the document's Planner. `post` stores the message in Chat and
	 * publishes it; call it only once the Planner takes the message, so a refused one leaves no trace.
	 */
	handleMessage(message: PlannerMessage, post: () => Promise<MessageView>): Promise<PlannerReply>;
	/** The document's Planner as its page shows it. */
	status(documentId: string): PlannerStatus;
}

/** The spec's refusal when no client is attached and no machine is starting one. */
export function notAttachedMessage(documentUrl: string, repository: string): string {
	return (
		"Connect a machine to get a reply. Connect an agent client to " +
		`${documentUrl} over the agent connection from a session in a checkout of ${repository}.`
	);
}

/** No agent endpoint: no document ever has an attached Planner. */
export class UnattachedPlannerService implements PlannerService {
	async handleMessage(message: PlannerMessage): Promise<PlannerReply> {
		return {
			accepted: false,
			code: "planner-not-attached",
			message: notAttachedMessage(message.documentUrl, message.repository),
		};
	}

	status(): PlannerStatus {
		return { state: "unattached" };
	}
}
