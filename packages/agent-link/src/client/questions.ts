/**
 * Questions a session asks: the options of an input-request, what ask() settles with (the
 * server's input-result, or a local cancelled one), and the record a session keeps per request.
 */
import { z } from "zod";
import { inputRequestSchema } from "../schemas/client-messages";
import { idString, noteString } from "../schemas/fields";
import type { Question } from "../schemas/questions";
import type { InputResult } from "../schemas/server-messages";

/** The optional fields of input-request a caller sets. */
export const askOptionsSchema = inputRequestSchema.pick({
	workflowRunId: true,
	workflowStageId: true,
	rootRunId: true,
	block: true,
});
export type AskOptions = z.infer<typeof askOptionsSchema> & {
	/** Aborting it withdraws the question (input-cancel) and settles it cancelled. */
	signal?: AbortSignal;
};

/**
 * The client's own settlement of a question the server never answered: withdrawn, its session
 * ended, or the link closed for good. Unlike the server's cancelled it has a message and no value.
 */
export const localCancelledResultSchema = z.strictObject({
	type: z.literal("input-result"),
	request: idString,
	status: z.literal("cancelled"),
	message: noteString,
	local: z.literal(true),
});
export type LocalCancelledResult = z.infer<typeof localCancelledResultSchema>;

/** What ask() settles with. Check a server result's value with readInputResult(question, result). */
export type QuestionResult = InputResult | LocalCancelledResult;

/** ask()'s promise, with the request id and a way to withdraw it. */
export type AskedQuestion = Promise<QuestionResult> & {
	readonly request: string;
	/** Withdraws the question; false when it had already settled. */
	cancel(): boolean;
};

export function localCancelled(request: string, message: string): LocalCancelledResult {
	return { type: "input-result", request, status: "cancelled", message, local: true };
}

/** A question the session waits on; sent is false while it waits for a link to carry it. */
export interface PendingQuestion {
	request: string;
	input: Question;
	options: z.infer<typeof askOptionsSchema>;
	sent: boolean;
	settle(result: QuestionResult): void;
}
