/** Every message the server sends a client: the handshake answers and the messages of a live link. */
import { z } from "zod";
import { errorCodeSchema } from "../closing";
import { TOOL_DESCRIPTION_MAX, TOOLS_MAX } from "../limits";
import { attachmentsSchema } from "./attachments";
import { chars, count, flag, idString, nameString, noteString, textString } from "./fields";
import { attachedSchema, refusedSchema } from "./handshake";
import { jsonObjectSchema, jsonValueSchema } from "./json";
import { inputStatusSchema } from "./questions";
import { resumeSessionSchema } from "./resume";

const jsonObject = jsonObjectSchema;

export const sessionModeSchema = z.enum(["planner", "isolated"]);

export const startSchema = z.strictObject({
	type: z.literal("start"),
	session: idString,
	mode: sessionModeSchema,
});
export type Start = z.infer<typeof startSchema>;

/** session-forks */
export const forkSchema = z.strictObject({
	type: z.literal("fork"),
	session: idString,
	mode: sessionModeSchema,
	from: z.strictObject({ session: idString, turn: idString.optional() }),
});
export type Fork = z.infer<typeof forkSchema>;

/** One of Chopin's host tools offered in a turn. */
export const hostToolSchema = z.strictObject({
	name: nameString,
	description: chars(0, TOOL_DESCRIPTION_MAX).optional(),
	inputSchema: jsonObject.optional(),
});
export type HostTool = z.infer<typeof hostToolSchema>;

export const responseFormatSchema = z.discriminatedUnion("type", [
	z.strictObject({ type: z.literal("text") }),
	z.strictObject({
		type: z.literal("json"),
		schema: jsonObject.optional(),
		name: nameString.optional(),
		description: noteString.optional(),
	}),
]);
export type ResponseFormat = z.infer<typeof responseFormatSchema>;

/**
 * model and thinkingLevel are never empty ("neither is ever empty"); message is the id of the
 * Chat message the turn answers, so it has an id's limits, and retry needs it.
 */
export const turnSchema = z
	.strictObject({
		type: z.literal("turn"),
		session: idString,
		turn: idString,
		prompt: textString,
		instructions: textString.optional(),
		model: chars(1).optional(),
		thinkingLevel: chars(1).optional(),
		attachments: attachmentsSchema.optional(),
		message: idString.optional(),
		retry: flag.optional(),
		tools: z.array(hostToolSchema).max(TOOLS_MAX),
		responseFormat: responseFormatSchema.optional(),
	})
	.check((ctx) => {
		if (ctx.value.retry === true && ctx.value.message === undefined) {
			ctx.issues.push({
				code: "custom",
				path: ["retry"],
				message: "may be true only with the message it runs again",
				input: ctx.value.retry,
			});
		}
	});
export type Turn = z.infer<typeof turnSchema>;

export const abortSchema = z.strictObject({ type: z.literal("abort"), session: idString, turn: idString });
export type Abort = z.infer<typeof abortSchema>;

/** steer-turn */
export const steerSchema = z.strictObject({
	type: z.literal("steer"),
	request: idString,
	session: idString,
	turn: idString,
	prompt: textString,
});
export type Steer = z.infer<typeof steerSchema>;

export const hostToolResultSchema = z.strictObject({
	type: z.literal("host-tool-result"),
	session: idString,
	turn: idString,
	toolCallId: idString,
	output: jsonValueSchema,
	isError: flag.optional(),
});
export type HostToolResult = z.infer<typeof hostToolResultSchema>;

/**
 * The value's shape depends on the question's method, which the result does not name: see
 * readInputResult. What holds for every method is checked here: failed has a message and no
 * value; the other statuses have a value (null counts) and no message.
 */
export const inputResultSchema = z
	.strictObject({
		type: z.literal("input-result"),
		request: idString,
		status: inputStatusSchema,
		value: jsonValueSchema.optional(),
		message: noteString.optional(),
	})
	.check((ctx) => {
		const result = ctx.value;
		const hasValue = "value" in result && result.value !== undefined;
		if (result.status === "failed") {
			if (hasValue) ctx.issues.push(issue(["value"], "must be absent when status is failed", result.value));
			if (result.message === undefined)
				ctx.issues.push(issue(["message"], "is required when status is failed", result));
		} else {
			if (!hasValue) ctx.issues.push(issue(["value"], `is required when status is ${result.status}`, result));
			if (result.message !== undefined)
				ctx.issues.push(issue(["message"], "must be absent unless status is failed", result.message));
		}
	});
export type InputResult = z.infer<typeof inputResultSchema>;

function issue(path: string[], message: string, input: unknown) {
	return { code: "custom" as const, path, message, input };
}

/** Stop Planner: pause every workflow run of the session, or only run. */
export const stopPlannerSchema = z.strictObject({
	type: z.literal("stop"),
	request: idString,
	session: idString,
	run: idString.optional(),
});
export type StopPlanner = z.infer<typeof stopPlannerSchema>;

/** Resume Planner (not the resume of a dropped link, which the client sends). */
export const resumePlannerSchema = z.strictObject({
	type: z.literal("resume"),
	request: idString,
	session: idString,
	run: idString.optional(),
});
export type ResumePlanner = z.infer<typeof resumePlannerSchema>;

export const destroySchema = z.strictObject({ type: z.literal("destroy"), session: idString });
export type Destroy = z.infer<typeof destroySchema>;

/** restart-notice */
export const restartingSchema = z.strictObject({ type: z.literal("restarting"), reconnectWithinMs: count });
export type Restarting = z.infer<typeof restartingSchema>;

export const errorMessageSchema = z.strictObject({
	type: z.literal("error"),
	code: errorCodeSchema,
	message: noteString,
});
export type ErrorMessage = z.infer<typeof errorMessageSchema>;

/** resumable-sessions: the answer to a client's resume, in the same shape. */
export const resumedSchema = z.strictObject({
	type: z.literal("resumed"),
	sessions: z.array(resumeSessionSchema),
});
export type Resumed = z.infer<typeof resumedSchema>;

/** Keyed by type, so parse finds a message's schema (and its feature gate) before validating it. */
export const SERVER_MESSAGE_SCHEMAS = {
	attached: attachedSchema,
	refused: refusedSchema,
	start: startSchema,
	fork: forkSchema,
	turn: turnSchema,
	abort: abortSchema,
	steer: steerSchema,
	"host-tool-result": hostToolResultSchema,
	"input-result": inputResultSchema,
	stop: stopPlannerSchema,
	resume: resumePlannerSchema,
	destroy: destroySchema,
	restarting: restartingSchema,
	error: errorMessageSchema,
	resumed: resumedSchema,
} as const;

export const serverMessageSchema = z.discriminatedUnion("type", [
	attachedSchema,
	refusedSchema,
	startSchema,
	forkSchema,
	turnSchema,
	abortSchema,
	steerSchema,
	hostToolResultSchema,
	inputResultSchema,
	stopPlannerSchema,
	resumePlannerSchema,
	destroySchema,
	restartingSchema,
	errorMessageSchema,
	resumedSchema,
]);
export type ServerMessage = z.infer<typeof serverMessageSchema>;
export type ServerMessageType = ServerMessage["type"];
