// A run's log as its machine sends it (run-log): lines numbered per run, masked for tokens, capped per run with
// the oldest dropped, and read back a page at a time.
import { RUN_LOG_KINDS, type RunLogEntry } from "@chopin/agent-link/machine";
import { redactTokens } from "@chopin/agent-link/redact";
import { z } from "zod";
import type { Db } from "../store/store";

/** Lines kept per run; older ones are dropped as new ones come. */
export const LOG_LINES_KEPT = 5_000;
/** A page of GET /api/builds/:id/log holds this many lines unless asked for fewer, and at most LOG_PAGE_MAX. */
export const LOG_PAGE_DEFAULT = 500;
export const LOG_PAGE_MAX = 2_000;

export const logLineSchema = z.strictObject({
	seq: z.number(),
	at: z.number(),
	kind: z.enum(RUN_LOG_KINDS),
	text: z.string(),
});
export type LogLine = z.infer<typeof logLineSchema>;

const lineRow = z.object({ seq: z.number(), at: z.number(), kind: z.enum(RUN_LOG_KINDS), text: z.string() });

/**
 * Appends entries to the run's log and returns them numbered. The numbers come from one UPDATE ...
 * RETURNING on the run's row, so two batches never share one.
 */
export async function appendLog(
	db: Db,
	buildId: string,
	entries: readonly RunLogEntry[],
): Promise<LogLine[]> {
	if (entries.length === 0) return [];
	const bumped = await db.one(
		db.sql`UPDATE builds SET log_seq = log_seq + ${entries.length} WHERE id = ${buildId} RETURNING log_seq`,
		z.object({ log_seq: z.number() }),
	);
	if (!bumped) return [];
	const first = bumped.log_seq - entries.length + 1;
	const lines = entries.map((e, i) => ({
		seq: first + i,
		// A line's text may carry what an agent printed: tokens are masked before anything keeps it.
		at: e.at,
		kind: e.kind,
		text: redactTokens(e.text),
	}));
	await db.sql`INSERT INTO build_log ${db.sql(lines.map((l) => ({ build_id: buildId, ...l })))}`;
	if (bumped.log_seq > LOG_LINES_KEPT) {
		await db.sql`DELETE FROM build_log WHERE build_id = ${buildId} AND seq <= ${bumped.log_seq - LOG_LINES_KEPT}`;
	}
	return lines;
}

/** Lines after `after` (0: from the oldest kept), oldest first; `more` when lines past the page remain. */
export async function readLog(
	db: Db,
	buildId: string,
	options: { after?: number; limit?: number } = {},
): Promise<{ lines: LogLine[]; more: boolean }> {
	const limit = options.limit ?? LOG_PAGE_DEFAULT;
	const rows = await db.many(
		db.sql`SELECT seq, at, kind, text FROM build_log WHERE build_id = ${buildId} AND seq > ${options.after ?? 0}
			ORDER BY seq LIMIT ${limit + 1}`,
		lineRow,
	);
	return { lines: rows.slice(0, limit), more: rows.length > limit };
}
