/** Stream parts: what part.part carries, the AI SDK's harness stream parts without metadata. */
import { z } from "zod";
import { count, flag, idString, nameString, noteString, shortString, textString } from "./fields";
import { jsonValueSchema } from "./json";

export const FINISH_REASONS = ["stop", "length", "content-filter", "tool-calls", "error", "other"] as const;

export const finishReasonSchema = z.strictObject({
	unified: z.enum(FINISH_REASONS),
	raw: shortString.optional(),
});
export type FinishReason = z.infer<typeof finishReasonSchema>;

/** inputTokens and outputTokens are always there; each count inside them is optional. */
export const usageSchema = z.strictObject({
	inputTokens: z.strictObject({
		total: count.optional(),
		noCache: count.optional(),
		cacheRead: count.optional(),
		cacheWrite: count.optional(),
	}),
	outputTokens: z.strictObject({
		total: count.optional(),
		text: count.optional(),
		reasoning: count.optional(),
	}),
});
export type Usage = z.infer<typeof usageSchema>;

export const streamStartPartSchema = z.strictObject({
	type: z.literal("stream-start"),
	modelId: textString.optional(),
});

const startEnd = <T extends string>(type: T) => z.strictObject({ type: z.literal(type), id: idString });
const delta = <T extends string>(type: T) =>
	z.strictObject({ type: z.literal(type), id: idString, delta: textString });

export const textStartPartSchema = startEnd("text-start");
export const textDeltaPartSchema = delta("text-delta");
export const textEndPartSchema = startEnd("text-end");
export const reasoningStartPartSchema = startEnd("reasoning-start");
export const reasoningDeltaPartSchema = delta("reasoning-delta");
export const reasoningEndPartSchema = startEnd("reasoning-end");

export const toolInputStartPartSchema = z.strictObject({
	type: z.literal("tool-input-start"),
	id: idString,
	toolName: nameString,
	providerExecuted: flag.optional(),
	dynamic: flag.optional(),
	title: noteString.optional(),
});
export const toolInputDeltaPartSchema = delta("tool-input-delta");
export const toolInputEndPartSchema = startEnd("tool-input-end");

/** Only the client's own tools: the spec requires providerExecuted to say true. */
export const toolCallPartSchema = z.strictObject({
	type: z.literal("tool-call"),
	toolCallId: idString,
	toolName: nameString,
	input: textString,
	providerExecuted: z.literal(true),
	dynamic: flag.optional(),
});
export type ToolCallPart = z.infer<typeof toolCallPartSchema>;

/** result is any JSON: a structured tool error or image blocks are conventions inside it. */
export const toolResultPartSchema = z.strictObject({
	type: z.literal("tool-result"),
	toolCallId: idString,
	toolName: nameString,
	result: jsonValueSchema,
	isError: flag.optional(),
	preliminary: flag.optional(),
	dynamic: flag.optional(),
});
export type ToolResultPart = z.infer<typeof toolResultPartSchema>;

export const finishStepPartSchema = z.strictObject({
	type: z.literal("finish-step"),
	finishReason: finishReasonSchema,
	usage: usageSchema,
});
export const finishPartSchema = z.strictObject({
	type: z.literal("finish"),
	finishReason: finishReasonSchema,
	totalUsage: usageSchema,
});

/** Fails the turn with its text; the sender cuts it to 4000 characters (longer is refused). */
export const errorPartSchema = z.strictObject({ type: z.literal("error"), error: noteString });
export type ErrorPart = z.infer<typeof errorPartSchema>;

export const streamPartSchema = z.discriminatedUnion("type", [
	streamStartPartSchema,
	textStartPartSchema,
	textDeltaPartSchema,
	textEndPartSchema,
	reasoningStartPartSchema,
	reasoningDeltaPartSchema,
	reasoningEndPartSchema,
	toolInputStartPartSchema,
	toolInputDeltaPartSchema,
	toolInputEndPartSchema,
	toolCallPartSchema,
	toolResultPartSchema,
	finishStepPartSchema,
	finishPartSchema,
	errorPartSchema,
]);
export type StreamPart = z.infer<typeof streamPartSchema>;
export type StreamPartType = StreamPart["type"];
