// Where each Decision's cards show in a document as it is now. Pure and free of server imports, so the
// pages place cards with the very function the server documents (docs/decisions.md, Placement).
import type { DecisionView } from "./decision-view";

/** A block as far as placement needs it. */
interface BlockHandle {
	index: number;
	digest: string;
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
	blocks: readonly BlockHandle[],
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
