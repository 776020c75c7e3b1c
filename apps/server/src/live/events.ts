// The live events of a document, as zod schemas: what services publish and the /ws socket sends to pages.
import { z } from "zod";
import { buildViewSchema } from "../builds/build-view";
import { logLineSchema } from "../builds/log-lines";
import { messageViewSchema } from "../chat/message-view";
import { decisionViewSchema } from "../decisions/decision-view";
import { documentChangeSchema, documentSummarySchema } from "../documents/document-view";
import { runCardViewSchema } from "../runs/run-view";

const documentId = z.string();

export const messageCreatedEventSchema = z.strictObject({
	type: z.literal("message.created"),
	documentId,
	message: messageViewSchema,
});

/** A message changed other than by text: status, error line, Work details rows, images. Carries it whole. */
export const messageUpdatedEventSchema = z.strictObject({
	type: z.literal("message.updated"),
	documentId,
	message: messageViewSchema,
});

/** Text appended to a streaming reply. `offset` is the body's length (UTF-16 units) before it. */
export const messageDeltaEventSchema = z.strictObject({
	type: z.literal("message.delta"),
	documentId,
	messageId: z.string(),
	offset: z.int().nonnegative(),
	delta: z.string(),
});

const DELTA_KEYS: ReadonlySet<string> = new Set(["type", "documentId", "messageId", "offset", "delta"]);

/**
 * Whether the event is a message.delta exactly as messageDeltaEventSchema accepts it, checked by hand:
 * a streaming reply publishes one per socket read, and parsing each with the schema cost more than
 * the rest of the relay. Anything else is left to the schema.
 */
export function isPlainMessageDelta(event: unknown): boolean {
	if (typeof event !== "object" || event === null) return false;
	const e = event as Record<string, unknown>;
	const keys = Object.keys(e);
	return (
		keys.length === 5 &&
		keys.every((key) => DELTA_KEYS.has(key)) &&
		e.type === "message.delta" &&
		typeof e.documentId === "string" &&
		typeof e.messageId === "string" &&
		Number.isSafeInteger(e.offset) &&
		(e.offset as number) >= 0 &&
		typeof e.delta === "string"
	);
}

/** A message taken out of Chat for everyone: a failed reply a person retried. */
export const messageDeletedEventSchema = z.strictObject({
	type: z.literal("message.deleted"),
	documentId,
	messageId: z.string(),
});

export const decisionCreatedEventSchema = z.strictObject({
	type: z.literal("decision.created"),
	documentId,
	decision: decisionViewSchema,
});

export const decisionUpdatedEventSchema = z.strictObject({
	type: z.literal("decision.updated"),
	documentId,
	decision: decisionViewSchema,
});

/** The cards that changed (whole), and the ids of cards no longer shown. */
export const runsUpdatedEventSchema = z.strictObject({
	type: z.literal("runs.updated"),
	documentId,
	cards: z.array(runCardViewSchema),
	removed: z.array(z.string()),
});

export const documentUpdatedEventSchema = z.strictObject({
	type: z.literal("document.updated"),
	documentId,
	change: documentChangeSchema,
	document: documentSummarySchema,
	/** The new source, on a source change only. */
	source: z.string().optional(),
	/** Who made the change, when a person did. */
	by: z.string().optional(),
});

export const PLANNER_STATES = [
	"unattached",
	"starting",
	"attached",
	"working",
	"grace",
	"disconnected",
] as const;

/** Whether the document has a Planner and what it is doing (published by the agent endpoint). */
export const plannerStatusEventSchema = z.strictObject({
	type: z.literal("planner.status"),
	documentId,
	state: z.enum(PLANNER_STATES),
	/** The Planner owner's login, when there is one. */
	login: z.string().optional(),
	/** When a grace period ends (ms since the epoch). */
	until: z.int().optional(),
	/** Inside a restart's hand-over window: shown attached while its client comes back (spec: After a server restart). */
	restarting: z.literal(true).optional(),
});
export type PlannerStatusEvent = z.infer<typeof plannerStatusEventSchema>;

/** A model of the attached client's catalog as the composer shows it: names and descriptions are text. */
export const composerModelSchema = z.strictObject({
	id: z.string(),
	/** The catalog's name, else the id. */
	name: z.string(),
	/** Groups the picker: id groups, name (default: id) labels the group. */
	provider: z.strictObject({ id: z.string(), name: z.string() }).optional(),
	description: z.string().optional(),
	/** In the client's order and spelling; empty: no reasoning control. */
	thinkingLevels: z.array(z.string()),
	inputTypes: z.array(z.string()),
});
export type ComposerModel = z.infer<typeof composerModelSchema>;

/**
 * The spec's chat:model state (capability-catalog): what the composer offers and the document's choice. Sent
 * whole whenever the attached client reports a catalog, leaves, or somebody chooses; pages load it from
 * GET /api/documents/:id/model after "ready".
 */
export const chatModelEventSchema = z.strictObject({
	type: z.literal("chat.model"),
	documentId,
	/** The attached client's last report; absent when it reported none or nothing is attached: no choice. */
	catalog: z
		.strictObject({
			models: z.array(composerModelSchema),
			/** What runs when nobody chose: the operator's MODEL when set, else the catalog's default. */
			default: z
				.strictObject({ id: z.string(), name: z.string().optional(), thinkingLevel: z.string().optional() })
				.optional(),
			/** The client's commands as written (order and repeats kept). */
			commands: z.array(
				z.strictObject({ name: z.string(), description: z.string().optional(), kind: z.string() }),
			),
		})
		.optional(),
	choice: z.strictObject({
		model: z.string().optional(),
		/** The catalog name saved with the choice (older choices: the current catalog's, else the id). */
		modelName: z.string().optional(),
		thinkingLevel: z.string().optional(),
		/** The catalog no longer lists the chosen model or level, and Chat has not recorded the fallback yet. */
		unavailable: z.enum(["model", "level"]).optional(),
	}),
});
export type ChatModelEvent = z.infer<typeof chatModelEventSchema>;
export type ChatModelState = Omit<ChatModelEvent, "type" | "documentId">;

/**
 * Builds and investigations that changed, each whole (as anyone reading the document sees it: no machine label
 * or workspace path), and the ids of runs no longer listed (discarded).
 */
export const buildsUpdatedEventSchema = z.strictObject({
	type: z.literal("builds.updated"),
	documentId,
	builds: z.array(buildViewSchema),
	removed: z.array(z.string()),
});

/** Log lines appended to a run (numbered: a page that loaded up to `seq` skips what it has). */
export const buildLogEventSchema = z.strictObject({
	type: z.literal("build.log"),
	documentId,
	build: z.string(),
	lines: z.array(logLineSchema),
});

export const liveEventSchema = z.discriminatedUnion("type", [
	messageCreatedEventSchema,
	messageUpdatedEventSchema,
	messageDeltaEventSchema,
	messageDeletedEventSchema,
	decisionCreatedEventSchema,
	decisionUpdatedEventSchema,
	runsUpdatedEventSchema,
	documentUpdatedEventSchema,
	plannerStatusEventSchema,
	chatModelEventSchema,
	buildsUpdatedEventSchema,
	buildLogEventSchema,
]);
export type LiveEvent = z.infer<typeof liveEventSchema>;
export type LiveEventType = LiveEvent["type"];
