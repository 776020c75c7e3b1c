/**
 * Turning a session's runs report into runs messages (spec: Run stage deltas). With
 * run-stage-deltas a report too large for one frame, or a card with more than 64 stages, goes as
 * several complete reports in a row: full cards first, then delta cards carrying the stages left.
 * Without it, full cards carry the 64 most recent stages and earlierStages counts the rest.
 * With it, a card already sent on the link goes as a delta of what changed (runs-sent.ts).
 */
import { z } from "zod";
import { EncodeError } from "../encode";
import { describeIssues } from "../issues";
import { CARDS_MAX, MAX_FRAME_BYTES, RUN_IDS_MAX, STAGES_MAX } from "../limits";
import type { Runs } from "../schemas/client-messages";
import { idString } from "../schemas/fields";
import {
	type DeltaRunCard,
	deltaRunCardSchema,
	type FullRunCard,
	fullRunCardSchema,
	type Stage,
	stageSchema,
} from "../schemas/runs";
import { utf8ByteLength } from "../text";
import { LinkError } from "./errors";
import type { RunsSent } from "./runs-sent";

/** A full card as a backend reports it: every stage the run reached, in order, however many. */
export const reportedFullCardSchema = fullRunCardSchema.extend({ stages: z.array(stageSchema) });
export type ReportedFullCard = z.infer<typeof reportedFullCardSchema>;
export const reportedCardSchema = z.discriminatedUnion("stagesDelta", [
	reportedFullCardSchema,
	deltaRunCardSchema,
]);
export type ReportedCard = z.infer<typeof reportedCardSchema>;

/** What Session.reportRuns takes: the session's complete report, its cards' stages unbounded. */
export const runsReportSchema = z.strictObject({
	active: z.array(idString).max(RUN_IDS_MAX),
	paused: z.array(idString).max(RUN_IDS_MAX),
	cards: z.array(reportedCardSchema).max(CARDS_MAX),
});
export type RunsReport = z.infer<typeof runsReportSchema>;

/**
 * The runs messages for one report. With deltas and `sent` (what this link's messages made Chopin
 * store), full cards that only change or add stages go as delta cards of those stages.
 */
export function planRunsReport(session: string, input: RunsReport, deltas: boolean, sent?: RunsSent): Runs[] {
	const parsed = runsReportSchema.safeParse(input);
	if (!parsed.success) {
		throw new EncodeError(
			"malformed-message",
			describeIssues("runs report", parsed.error.issues, input, "the report"),
			"Report every card with the fields of the spec's run card.",
		);
	}
	const report = parsed.data;
	const base = { type: "runs" as const, session, active: report.active, paused: report.paused };
	if (!deltas) return [{ ...base, cards: report.cards.map(recentStages) }];
	const cards = sent ? sent.narrow(report.cards) : report.cards;

	const whole: Runs = { ...base, cards: cards as Runs["cards"] };
	const fitsAsIs =
		cards.every((card) => card.stagesDelta === true || card.stages.length <= STAGES_MAX) &&
		bytes(whole) <= MAX_FRAME_BYTES;
	return fitsAsIs ? [whole] : split(base, cards);
}

/** Without deltas: the 64 most recent stages, and earlierStages counting the ones left out. */
function recentStages(card: ReportedCard): FullRunCard {
	if (card.stagesDelta === true) {
		throw new LinkError(
			"feature-not-granted",
			"A delta run card needs run-stage-deltas, which this link did not grant.",
			"Report full cards (every stage) when link.features lacks run-stage-deltas.",
		);
	}
	const left = Math.max(0, card.stages.length - STAGES_MAX);
	if (left === 0) return card;
	return { ...card, stages: card.stages.slice(left), earlierStages: (card.earlierStages ?? 0) + left };
}

type Base = Omit<Runs, "cards">;

function split(base: Base, cards: ReportedCard[]): Runs[] {
	const next = cards.map(() => 0);
	const parts: Runs[] = [];
	for (let first = true; first || cards.some((card, i) => next[i]! < card.stages.length); first = false) {
		const out = cards.map((card) => skeleton(card, first));
		let size = bytes({ ...base, cards: out });
		if (size > MAX_FRAME_BYTES)
			throw tooLarge("The runs report is over the frame limit even without its stages.");
		const add = (i: number): boolean => {
			const stage = cards[i]!.stages[next[i]!] as Stage;
			const cost = bytes(stage) + (out[i]!.stages.length > 0 ? 1 : 0);
			if (size + cost > MAX_FRAME_BYTES) return false;
			out[i]!.stages.push(stage);
			next[i]!++;
			size += cost;
			return true;
		};
		const cap = (i: number) =>
			first && cards[i]!.stagesDelta !== true ? STAGES_MAX : Number.POSITIVE_INFINITY;
		let added = 0;
		// A full card with an empty list keeps the stages Chopin stores, so each full card that has
		// stages gets its first one in the first part, where it replaces them.
		if (first) {
			cards.forEach((card, i) => {
				if (card.stagesDelta === true || card.stages.length === 0) return;
				if (!add(i)) throw tooLarge("The runs report's first stages do not fit one frame together.");
				added++;
			});
		}
		fill: for (let i = 0; i < cards.length; i++) {
			while (next[i]! < cards[i]!.stages.length && out[i]!.stages.length < cap(i)) {
				if (!add(i)) break fill;
				added++;
			}
		}
		if (!first && added === 0) throw tooLarge("A run stage is too large for one frame.");
		parts.push({ ...base, cards: out });
	}
	return parts;
}

/** A card of one part with no stages yet: full in the first part (unless reported as a delta), a delta after. */
function skeleton(card: ReportedCard, first: boolean): FullRunCard | DeltaRunCard {
	const { stages: _stages, stagesDelta: _delta, ...fields } = card;
	if (first && card.stagesDelta !== true) return { ...fields, stages: [] };
	const { earlierStages: _earlier, ...rest } = fields as typeof fields & { earlierStages?: number };
	return { ...rest, stagesDelta: true, stages: [] };
}

function bytes(value: unknown): number {
	return utf8ByteLength(JSON.stringify(value));
}

function tooLarge(message: string): EncodeError {
	return new EncodeError("message-too-large", message, "Report fewer cards, or shorter names.");
}
