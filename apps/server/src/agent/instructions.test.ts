import { expect, test } from "bun:test";
import type { ContextEntry, ContextPart } from "../chat/context";
import { forkedInstructions, plannerInstructions } from "./instructions";

const doc = { title: "Rollout", repository: "a/b", url: "http://127.0.0.1/d/1" };
const entry = (seq: number, text: string): ContextEntry => {
	const line = `@alice: ${text}`;
	return { messageId: `m${seq}`, seq, role: "person", login: "alice", text, line, chars: line.length };
};
const part = (olderLeftOut: boolean): ContextPart => ({
	entries: [entry(1, "one"), entry(2, "two")],
	olderLeftOut,
});

test("the transcript says older entries were left out only when some were, without counting them", () => {
	expect(plannerInstructions(doc, part(false))).toContain("The Chat so far:\n\n@alice: one\n@alice: two");
	expect(plannerInstructions(doc, part(true))).toContain(
		"The Chat so far (the 2 latest entries; older ones are left out):\n\n@alice: one",
	);
});

test("a forked thread's backscroll says the same", () => {
	const thread = { rootLine: "@bob: @chopin plan it" };
	expect(forkedInstructions(doc, thread, part(false))).toContain(
		"Written in the thread since you last answered there:",
	);
	expect(forkedInstructions(doc, thread, part(true))).toContain(
		"Written in the thread since you last answered there (the 2 latest; older ones are left out):",
	);
});
