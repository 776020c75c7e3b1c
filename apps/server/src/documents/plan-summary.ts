// current_plan in open_decisions and ask results: the plan as JSON, without source and blocks when too large.
import { z } from "zod";
import { lineTable, splitBlocks } from "./blocks";
import { codePointCount, utf8Length } from "./characters";
import { oneLine, type ReadDocument } from "./read-view";

/** open_decisions and ask results carry the plan as JSON within this many bytes. */
export const PLAN_SUMMARY_BYTES = 8_000;

export const planSummarySchema = z.strictObject({
	id: z.string(),
	title: z.string(),
	url: z.string(),
	revision: z.number().int(),
	size: z.strictObject({ bytes: z.number().int(), lines: z.number().int(), blocks: z.number().int() }),
	blocks: z
		.array(
			z.strictObject({
				index: z.number().int(),
				startLine: z.number().int(),
				endLine: z.number().int(),
				kind: z.string(),
				digest: z.string(),
			}),
		)
		.optional(),
	source: z.string().optional(),
	/** True when source and blocks were left out to stay within the limit; note then says how to read them. */
	source_omitted: z.boolean(),
	note: z.string().optional(),
});
export type PlanSummary = z.infer<typeof planSummarySchema>;

/**
 * current_plan for open_decisions and ask results: the plan with its source and blocks while that
 * JSON fits maxBytes (UTF-8), else without both and with source_omitted true (spec: Reading a large document).
 */
export function planSummaryJson(plan: ReadDocument, maxBytes = PLAN_SUMMARY_BYTES): PlanSummary {
	const blocks = splitBlocks(plan.source);
	const base = {
		id: plan.id,
		title: plan.title,
		url: plan.url,
		revision: plan.revision,
		size: {
			bytes: utf8Length(plan.source, 0, plan.source.length),
			lines: lineTable(plan.source).count,
			blocks: blocks.length,
		},
	};
	const full: PlanSummary = {
		...base,
		blocks: blocks.map(({ index, startLine, endLine, kind, digest }) => ({
			index,
			startLine,
			endLine,
			kind,
			digest,
		})),
		source: plan.source,
		source_omitted: false,
	};
	if (Buffer.byteLength(JSON.stringify(full)) <= maxBytes) return full;
	const omitted: PlanSummary = {
		...base,
		source_omitted: true,
		note: `The plan is ${base.size.bytes} bytes, over the ${maxBytes} bytes current_plan carries; read it with read_plan.`,
	};
	// Only an absurdly long title could still be over; cut it rather than break the limit.
	for (let over = Buffer.byteLength(JSON.stringify(omitted)) - maxBytes; over > 0 && omitted.title; ) {
		const chars = codePointCount(omitted.title, 0, omitted.title.length);
		omitted.title = chars > over + 1 ? oneLine(omitted.title, chars - over - 1) : "";
		over = Buffer.byteLength(JSON.stringify(omitted)) - maxBytes;
	}
	return omitted;
}
