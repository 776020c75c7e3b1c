/**
 * Field builders shared by every schema: strings bounded in code points (the spec's
 * "characters"), the shared limit kinds, and counts.
 */
import { z } from "zod";
import { ID_MAX, NAME_MAX, NOTE_MAX, SHORT_MAX } from "../limits";
import { codePointLength } from "../text";

/**
 * A string of min to max code points. zod's own min/max count UTF-16 units, which would let a
 * 4000-character note of emoji fail at 2000, so the length is checked here instead.
 */
export function chars(min: number, max = Number.POSITIVE_INFINITY) {
	return z.string().check((ctx) => {
		const text = ctx.value;
		// Code points never outnumber UTF-16 units, so most strings need no count at all.
		if (text.length > max && codePointLength(text, max) > max) {
			ctx.issues.push({ code: "too_big", origin: "string", maximum: max, inclusive: true, input: text });
		} else if (min > 0 && (text.length < min || codePointLength(text, min) < min)) {
			ctx.issues.push({ code: "too_small", origin: "string", minimum: min, inclusive: true, input: text });
		}
	});
}

/** id: session, turn, request, toolCallId, part id, run and stage ids, ... (1 to 128). */
export const idString = chars(1, ID_MAX);
/** name: tool names, toolName, names entries, responseFormat.name (1 to 128). */
export const nameString = chars(1, NAME_MAX);
/** short: question header, finishReason.raw (up to 128). */
export const shortString = chars(0, SHORT_MAX);
/** note: message, every title, error, descriptions, question text, labels, ... (up to 4000). */
export const noteString = chars(0, NOTE_MAX);
/** text: prompt, instructions, delta, input, model and level fields; only the frame bounds it. */
export const textString = z.string();

/** A whole number of 0 or more (token counts, sizes, seconds since the epoch, indexes). */
export const count = z.int().nonnegative();

/** A flag the spec writes as `"field?": true`: a boolean, usually sent only when true. */
export const flag = z.boolean();
