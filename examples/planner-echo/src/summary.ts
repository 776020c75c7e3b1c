// A one-sentence summary of the document from read_plan's result: its title, how many blocks it has, and
// its first heading. read_plan answers a remote Planner with paged text (spec: Reading a large document),
// whose header says `document: <title>` and `size: ..., <n> blocks`; anything else gets a plain sentence.

export interface PlanFacts {
	title?: string;
	blocks?: number;
	heading?: string;
}

const DELIMITER = /^--- the document's text from /;

/** What the paged text's header and first lines say about the document. */
export function readPlanFacts(output: unknown): PlanFacts {
	if (typeof output !== "string") return {};
	const facts: PlanFacts = {};
	const lines = output.split(/\r?\n/);
	let inText = false;
	for (const line of lines) {
		if (!inText) {
			if (facts.title === undefined && line.startsWith("document: ")) facts.title = line.slice(10).trim();
			const size = /^size: .*?(\d+) blocks?$/.exec(line);
			if (facts.blocks === undefined && size) facts.blocks = Number(size[1]);
			if (DELIMITER.test(line)) inText = true;
			continue;
		}
		const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
		if (heading) {
			facts.heading = heading[1]!;
			break;
		}
	}
	return facts;
}

/** The sentence the echo adds to its reply. */
export function summarize(facts: PlanFacts): string {
	const title = facts.title ? `"${facts.title}"` : "This document";
	const blocks =
		facts.blocks === undefined ? "" : ` has ${facts.blocks} block${facts.blocks === 1 ? "" : "s"}`;
	const heading = facts.heading ? `${blocks ? ";" : ""} its first heading is "${facts.heading}"` : "";
	if (!blocks && !heading) return `I read ${title === "This document" ? "the document" : title}.`;
	return `${title}${blocks}${heading}.`;
}
