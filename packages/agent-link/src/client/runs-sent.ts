/**
 * What Chopin stores of a session's runs as the runs messages sent on one link made it (spec: Run
 * stage deltas), so that after each attach every stage goes once and then only what changes: a
 * later full card that only changes or adds stages goes as a delta card of those stages.
 */
import type { Runs } from "../schemas/client-messages";
import type { DeltaRunCard, RunCard } from "../schemas/runs";
import type { ReportedCard } from "./runs-report";

interface StoredRun {
	/** Each stage's JSON by id, in the order Chopin stores them. */
	stages: Map<string, string>;
	earlierStages: number;
	/** Chopin removes only ended cards (a later run replaces them), so only a live one is sure to be there. */
	live: boolean;
}

/** Live as Chat shows it: running, waiting, paused, or finished without ended. */
const isLive = (card: { status: string; ended?: number }) =>
	card.status === "running" ||
	card.status === "waiting" ||
	card.status === "paused" ||
	(card.status === "finished" && card.ended === undefined);

export class RunsSent {
	/** Only runs whose stored stages are certain: a run is left out until a full card with stages is sent. */
	readonly #runs = new Map<string, StoredRun>();

	/**
	 * A full card becomes a delta card of its new and changed stages when Chopin is sure to hold the
	 * run's card (it was live), every stage Chopin stores for it starts the card's list in the same
	 * order (so adding the rest at the end gives the card's order), no id repeats, and its
	 * earlierStages is the stored one. Anything else (a run started over, one not sent yet) goes as
	 * reported.
	 */
	narrow(cards: readonly ReportedCard[]): ReportedCard[] {
		return cards.map((card) => {
			const run = this.#runs.get(card.id);
			if (card.stagesDelta === true || !run?.live || card.stages.length === 0) return card;
			if ((card.earlierStages ?? 0) !== run.earlierStages) return card;
			if (new Set(card.stages.map((s) => s.id)).size !== card.stages.length) return card;
			if (card.stages.length < run.stages.size) return card;
			const stored = [...run.stages.keys()];
			if (stored.some((id, i) => card.stages[i]!.id !== id)) return card;
			const { earlierStages: _earlier, stages, ...fields } = card;
			const changed = stages.filter((s) => run.stages.get(s.id) !== JSON.stringify(s));
			return { ...fields, stagesDelta: true, stages: changed } satisfies DeltaRunCard;
		});
	}

	/** Applies the messages just sent, in order, as Chopin does; a run a message does not list is forgotten. */
	record(messages: readonly Runs[]): void {
		for (const message of messages) {
			const listed = new Set(message.cards.map((card) => card.id));
			for (const id of [...this.#runs.keys()]) if (!listed.has(id)) this.#runs.delete(id);
			for (const card of message.cards) this.#apply(card);
		}
	}

	#apply(card: RunCard): void {
		const run = this.#runs.get(card.id);
		const live = isLive(card);
		const json = (stages: RunCard["stages"]) =>
			new Map(stages.map((s) => [s.id, JSON.stringify(s)] as const));
		if (card.stagesDelta === true || card.stages.length === 0) {
			// A delta, or a full card with none: Chopin keeps what it has, which is known only for a known run.
			if (!run) return;
			for (const [id, stage] of json(card.stages)) run.stages.set(id, stage);
			run.live = live;
			return;
		}
		this.#runs.set(card.id, { stages: json(card.stages), earlierStages: card.earlierStages ?? 0, live });
	}
}
