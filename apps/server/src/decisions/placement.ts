// Where a Decision's cards go: after the block a question names, or at the end (spec: Questions, block).
// Cards are not Markdown: they live in the decisions table and a page shows them between the blocks.
import type { BlockRef as WireBlockRef } from "@chopin/agent-link";
import { type Block, resolveAnchor } from "../documents/blocks";
import type { DecisionView } from "./decision-view";

export type Placement =
	| { link: { index: number; digest: string }; unlinkedReason: null }
	| { link: null; unlinkedReason: "changed" | "repeated" | "decision-card" | null };

/**
 * Placement when a question is asked: directly after the named block, linked to it, unless it has
 * changed since it was read, its digest now repeats, or it is a decision card; then, as without a
 * block, at the end and linked to nothing. A decision card is never a block of the source (cards
 * are kept apart from the Markdown), so no block the Planner can name is one; the rule is kept for
 * the day a card is shown among the blocks a Planner reads.
 */
export function placeQuestion(blocks: readonly Block[], block: WireBlockRef | undefined): Placement {
	if (!block) return { link: null, unlinkedReason: null };
	// The wire allows upper-case hex; digests are made lower-case.
	const ref = { index: block.index, digest: block.digest.toLowerCase() };
	const anchor = resolveAnchor(blocks, ref, isDecisionCard);
	if (!anchor.block) return { link: null, unlinkedReason: anchor.reason };
	return { link: { index: anchor.block.index, digest: anchor.block.digest }, unlinkedReason: null };
}

/** No block of a document's source is a decision card: cards are stored apart from it. */
export function isDecisionCard(_block: Block): boolean {
	return false;
}

export interface CardPosition {
	decisionId: string;
	/** The block the cards follow now, or null for the end of the document. */
	afterBlock: number | null;
}

/**
 * Where each decision's cards show in the document as it is now, in reading order. A linked card
 * follows the block that still has its digest, wherever edits moved it; once that block is gone or
 * its digest repeats, the card shows at the end with the unlinked ones. Cards at one place keep the
 * order they were asked in.
 */
export function positionCards(
	blocks: readonly Pick<Block, "index" | "digest">[],
	decisions: readonly Pick<DecisionView, "id" | "seq" | "link">[],
): CardPosition[] {
	const byDigest = new Map<string, number[]>();
	for (const block of blocks)
		byDigest.set(block.digest, [...(byDigest.get(block.digest) ?? []), block.index]);
	const positions = decisions.map((d) => {
		const found = d.link ? byDigest.get(d.link.digest) : undefined;
		return { decisionId: d.id, afterBlock: found?.length === 1 ? found[0]! : null, seq: d.seq };
	});
	positions.sort((a, b) => {
		const pa = a.afterBlock ?? Number.POSITIVE_INFINITY;
		const pb = b.afterBlock ?? Number.POSITIVE_INFINITY;
		return pa === pb ? a.seq - b.seq : pa - pb;
	});
	return positions.map(({ decisionId, afterBlock }) => ({ decisionId, afterBlock }));
}
