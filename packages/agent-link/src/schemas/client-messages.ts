/** Every message a client sends the server: attach, and the messages of a live link. */
import { z } from "zod";
import { CARDS_MAX, RUN_IDS_MAX, TOOLS_MAX } from "../limits";
import { catalogSchema } from "./catalog";
import { idString, nameString, noteString, textString } from "./fields";
import { attachSchema } from "./handshake";
import { streamPartSchema } from "./parts";
import { blockRefSchema, questionSchema } from "./questions";
import { resumeSessionSchema } from "./resume";
import { runCardSchema } from "./runs";

export const startedSchema = z.strictObject({ type: z.literal("started"), session: idString });
export type Started = z.infer<typeof startedSchema>;

/** message is cut to 4000 characters by the sender: a longer one is refused. */
export const startFailedSchema = z.strictObject({
	type: z.literal("start-failed"),
	session: idString,
	message: noteString,
});
export type StartFailed = z.infer<typeof startFailedSchema>;

export const toolsSchema = z.strictObject({
	type: z.literal("tools"),
	session: idString,
	turn: idString,
	names: z.array(nameString).max(TOOLS_MAX),
});
export type Tools = z.infer<typeof toolsSchema>;

export const partSchema = z.strictObject({
	type: z.literal("part"),
	session: idString,
	turn: idString,
	part: streamPartSchema,
});
export type Part = z.infer<typeof partSchema>;

/**
 * input is the arguments as a JSON string. It is not parsed here: invalid input is answered with
 * an error result, not by closing the link.
 */
export const hostToolCallSchema = z.strictObject({
	type: z.literal("host-tool-call"),
	session: idString,
	turn: idString,
	toolCallId: idString,
	toolName: nameString,
	input: textString,
});
export type HostToolCall = z.infer<typeof hostToolCallSchema>;

export const TURN_END_STATUSES = ["finished", "failed", "aborted"] as const;

export const turnEndSchema = z.strictObject({
	type: z.literal("turn-end"),
	session: idString,
	turn: idString,
	status: z.enum(TURN_END_STATUSES),
	message: noteString.optional(),
});
export type TurnEnd = z.infer<typeof turnEndSchema>;

export const inputRequestSchema = z.strictObject({
	type: z.literal("input-request"),
	request: idString,
	session: idString,
	workflowRunId: idString.optional(),
	workflowStageId: idString.optional(),
	rootRunId: idString.optional(),
	block: blockRefSchema.optional(),
	input: questionSchema,
});
export type InputRequest = z.infer<typeof inputRequestSchema>;

export const inputCancelSchema = z.strictObject({ type: z.literal("input-cancel"), request: idString });
export type InputCancel = z.infer<typeof inputCancelSchema>;

/** A complete report of the session's runs; delta cards need run-stage-deltas. */
export const runsSchema = z.strictObject({
	type: z.literal("runs"),
	session: idString,
	active: z.array(idString).max(RUN_IDS_MAX),
	paused: z.array(idString).max(RUN_IDS_MAX),
	cards: z.array(runCardSchema).max(CARDS_MAX),
});
export type Runs = z.infer<typeof runsSchema>;

/** Answers stop, resume or (steer-turn) steer. */
export const controlResultSchema = z.strictObject({
	type: z.literal("control-result"),
	request: idString,
	ok: z.boolean(),
	message: noteString.optional(),
});
export type ControlResult = z.infer<typeof controlResultSchema>;

export const detachSchema = z.strictObject({ type: z.literal("detach") });
export type Detach = z.infer<typeof detachSchema>;

/** resumable-sessions: the first message after attached, naming what the client still holds. */
export const resumeSchema = z.strictObject({
	type: z.literal("resume"),
	sessions: z.array(resumeSessionSchema),
});
export type Resume = z.infer<typeof resumeSchema>;

/** resumable-sessions: the client has the input-result for request. */
export const inputReceivedSchema = z.strictObject({ type: z.literal("input-received"), request: idString });
export type InputReceived = z.infer<typeof inputReceivedSchema>;

/** capability-catalog */
export const capabilitiesSchema = z.strictObject({ type: z.literal("capabilities"), catalog: catalogSchema });
export type Capabilities = z.infer<typeof capabilitiesSchema>;

/** Keyed by type, so parse finds a message's schema (and its feature gate) before validating it. */
export const CLIENT_MESSAGE_SCHEMAS = {
	attach: attachSchema,
	started: startedSchema,
	"start-failed": startFailedSchema,
	tools: toolsSchema,
	part: partSchema,
	"host-tool-call": hostToolCallSchema,
	"turn-end": turnEndSchema,
	"input-request": inputRequestSchema,
	"input-cancel": inputCancelSchema,
	runs: runsSchema,
	"control-result": controlResultSchema,
	detach: detachSchema,
	resume: resumeSchema,
	"input-received": inputReceivedSchema,
	capabilities: capabilitiesSchema,
} as const;

export const clientMessageSchema = z.discriminatedUnion("type", [
	attachSchema,
	startedSchema,
	startFailedSchema,
	toolsSchema,
	partSchema,
	hostToolCallSchema,
	turnEndSchema,
	inputRequestSchema,
	inputCancelSchema,
	runsSchema,
	controlResultSchema,
	detachSchema,
	resumeSchema,
	inputReceivedSchema,
	capabilitiesSchema,
]);
export type ClientMessage = z.infer<typeof clientMessageSchema>;
export type ClientMessageType = ClientMessage["type"];
