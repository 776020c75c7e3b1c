// The instructions of a Planner turn: the Planner's system prompt for this document, then the bounded Chat
// transcript a fresh session starts from (hosted-agent.md, Chat context), each line in its author's voice; in a
// forked thread session (session-forks), what the thread gained since the fork point instead.
import type { ContextPart } from "../chat/context";

export interface InstructedDocument {
	title: string;
	repository: string;
	url: string;
}

const ROLE = `You are chopin, the Planner of a shared Chopin document. People write to you in the document's Chat by mentioning @chopin; each person keeps their own handle, so read who said what and do not merge their views into one voice.

Your job is co-authoring the document with them: understand what they ask, read the document, change it where they agree, and ask them when a choice is theirs to make. You do not implement code and you do not change GitHub.

Tools Chopin gives you (host tools):
- read_plan: read this document a page at a time. Its header names the revision and each block's index and digest.
- read_child: read another document of the same repository by its id.
- edit_plan: change this document by blocks, naming each block by the index and digest of your latest read_plan or edit_plan result. Edits apply all or nothing; read again if a block changed.
- open_decisions: the questions still open in the document, and the document as JSON.

To ask the people a question (a choice, a confirmation, a piece of text), ask it as a question of your own (an input-request): it becomes a Decision card in the document, after the block it concerns, and you get the members' answer. Do not ask in prose what a Decision can ask.

Reply in Chat in plain Markdown, briefly. Read the document with read_plan before changing it: never rely on an old copy.`;

/** The thread a turn answers in: its root as the model reads it (`@login: text`). */
export interface InstructedThread {
	rootLine: string;
}

function opening(doc: InstructedDocument): string[] {
	return [
		ROLE,
		"",
		`The document is "${doc.title}" (${doc.url}), in the GitHub repository ${doc.repository}.`,
		"",
	];
}

/**
 * The instructions of a turn that starts a session: the system prompt and the transcript so far. In a thread, the
 * transcript is the main Chat up to the thread's root (and the reply to it), then the thread.
 */
export function plannerInstructions(
	doc: InstructedDocument,
	transcript: ContextPart,
	thread?: InstructedThread,
): string {
	const lines = opening(doc);
	if (thread) {
		lines.push(
			"You answer in a thread of the Chat, on this message:",
			thread.rootLine,
			"What follows is the Chat up to that message, then the thread.",
			"",
		);
	}
	if (transcript.entries.length === 0) {
		lines.push("The Chat has no earlier messages.");
	} else {
		lines.push(
			transcript.olderLeftOut
				? `The Chat so far (the ${transcript.entries.length} latest entries; older ones are left out):`
				: "The Chat so far:",
			"",
			...transcript.entries.map((entry) => entry.line),
		);
	}
	lines.push("", "The person's message you answer now is this turn's prompt.");
	return lines.join("\n");
}

/**
 * The instructions of a turn in a forked session (session-forks): the conversation up to the fork point is the
 * session's own, so only what people wrote in the thread since the Planner last answered there is given.
 */
export function forkedInstructions(
	doc: InstructedDocument,
	thread: InstructedThread,
	backscroll: ContextPart,
): string {
	const lines = opening(doc);
	lines.push("You answer in a thread of the Chat, on this message:", thread.rootLine, "");
	if (backscroll.entries.length > 0) {
		lines.push(
			backscroll.olderLeftOut
				? `Written in the thread since you last answered there (the ${backscroll.entries.length} latest; older ones are left out):`
				: "Written in the thread since you last answered there:",
			"",
			...backscroll.entries.map((entry) => entry.line),
			"",
		);
	}
	lines.push("The person's message you answer now is this turn's prompt.");
	return lines.join("\n");
}
