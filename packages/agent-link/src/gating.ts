/**
 * Which messages and fields need a negotiated feature. A peer that did not negotiate a feature
 * never sends what it allows, so parse refuses such a message as malformed and encode never
 * writes one.
 */
import type { Feature } from "./features";
import type { ClientMessage, ClientMessageType } from "./schemas/client-messages";
import type { ServerMessage, ServerMessageType } from "./schemas/server-messages";

/** Message types only a feature allows, by direction. */
export const SERVER_TYPE_FEATURES: Readonly<Partial<Record<ServerMessageType, Feature>>> = {
	fork: "session-forks",
	steer: "steer-turn",
	restarting: "restart-notice",
	resumed: "resumable-sessions",
};
export const CLIENT_TYPE_FEATURES: Readonly<Partial<Record<ClientMessageType, Feature>>> = {
	resume: "resumable-sessions",
	"input-received": "resumable-sessions",
	capabilities: "capability-catalog",
};

/** Fields of turn only a feature allows. turn.model is not among them: an operator's MODEL sets it. */
export const TURN_FIELD_FEATURES = {
	thinkingLevel: "capability-catalog",
	attachments: "attachments",
	message: "retry-turn",
	retry: "retry-turn",
} as const satisfies Record<string, Feature>;

/** A field that needs a feature the link did not negotiate. */
export interface GatedField {
	path: (string | number)[];
	feature: Feature;
}

export function gatedServerField(message: ServerMessage, features: ReadonlySet<Feature>): GatedField | null {
	if (message.type !== "turn") return null;
	for (const [field, feature] of Object.entries(TURN_FIELD_FEATURES)) {
		if (field in message && !features.has(feature)) return { path: [field], feature };
	}
	return null;
}

export function gatedClientField(message: ClientMessage, features: ReadonlySet<Feature>): GatedField | null {
	if (message.type !== "runs" || features.has("run-stage-deltas")) return null;
	const index = message.cards.findIndex((card) => card.stagesDelta === true);
	return index === -1 ? null : { path: ["cards", index, "stagesDelta"], feature: "run-stage-deltas" };
}
