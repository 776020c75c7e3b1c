// The example's "model": every turn reads the document with the read_plan host tool and replies
// `Echo: <message>` with a one-line summary of it; a message with the word "ask" also asks the room a
// question (a Decision) and replies with the answer once it comes.
import { type Question, readInputResult } from "@chopin/agent-link";
import type { QuestionResult, Turn } from "@chopin/agent-link/client";
import { readPlanFacts, summarize } from "./summary";

/** The question a message with "ask" opens: one choice, so a person answers it with one click. */
export const ECHO_QUESTION = {
	method: "select",
	title: "Planner echo asks: which fruit?",
	choices: ["Apples", "Pears"],
} as const satisfies Question;

/** A person's message reaches the Planner as `@login: text`; the echo repeats the text. */
export function messageOf(prompt: string): string {
	const match = /^@[^\s:]+: ([\s\S]*)$/.exec(prompt);
	return (match ? match[1]! : prompt).trim();
}

export function wantsQuestion(message: string): boolean {
	return /\bask\b/i.test(message);
}

/** What the reply says about the answer. */
export function answerSentence(result: QuestionResult): string {
	if (result.status !== "answered") return `The question was not answered (${result.status}).`;
	const reading = readInputResult(ECHO_QUESTION, result);
	if (!reading.ok || reading.status !== "answered") return "The answer could not be read.";
	return reading.value === null ? "Someone wrote their own answer." : `You chose ${reading.value}.`;
}

/** Short, one-line text for a log line. */
export function oneLine(text: string, max = 80): string {
	const flat = text.replace(/\s+/g, " ").trim();
	return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Answers one turn; log gets a line per turn and per question. */
export async function answerTurn(turn: Turn, log: (line: string) => void): Promise<void> {
	const message = messageOf(turn.prompt);
	log(`turn ${turn.id}: ${JSON.stringify(oneLine(message))}`);
	let summary = "I could not read the document: this turn does not offer read_plan.";
	if (turn.tools.some((tool) => tool.name === "read_plan")) {
		const plan = await turn.callHostTool("read_plan", {});
		summary = plan.isError
			? "I could not read the document just now."
			: summarize(readPlanFacts(plan.output));
	}
	if (turn.signal.aborted) return;
	await turn.text(`Echo: ${message}\n\n${summary}`);

	if (wantsQuestion(message)) {
		const asked = turn.session.ask(ECHO_QUESTION);
		// The server aborting the turn withdraws the question; a dropped link does not: the session keeps
		// waiting on it across the drop and its resume (spec: Resuming after a dropped link).
		const withdraw = () => {
			if (turn.session.connected) asked.cancel();
		};
		turn.signal.addEventListener("abort", withdraw, { once: true });
		log(`question ${asked.request} asked in turn ${turn.id}`);
		const result = await asked;
		turn.signal.removeEventListener("abort", withdraw);
		log(`question ${asked.request} settled: ${result.status}`);
		// An abort or a drop ended the turn while the room answered: nobody can read a reply now, and
		// returning lets the client end an aborted turn as aborted.
		if (turn.signal.aborted) return;
		await turn.text(`\n\n${answerSentence(result)}`);
	}
	await turn.end("finished");
	log(`turn ${turn.id} finished`);
}
