// Where a Decision's cards go: after the block a question names, or at the end (spec: Questions, block).
// Cards are not Markdown: they live in the decisions table and a page shows them between the blocks.
import type { BlockRef as WireBlockRef } from "@chopin/agent-link";
import { type Block, resolveAnchor } from "../documents/blocks";

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

export { type CardPosition, positionCards } from "./card-positions";
