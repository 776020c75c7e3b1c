import { describe, expect, test } from "bun:test";
import { mentionsPlanner } from "./mentions";

describe("mentionsPlanner", () => {
	test.each([
		"@chopin what next?",
		"@Chopin what next?",
		"hey @CHOPIN",
		"what do you think, @chopin?",
		"ask @chopin.",
		"(@chopin)",
		'"@chopin"',
		"cc @chopin, @bo",
		"@chopin's take",
		"- item\n- @chopin in a list",
		"> @chopin in a quote",
		"# @chopin in a heading",
		"**@chopin** in bold",
		"_@chopin_",
		"[@chopin](https://example.com)",
		"| a | b |\n| - | - |\n| x | @chopin |",
		"`code` then @chopin",
		"```\ncode\n```\n\n@chopin after a fence",
		"line one\n@chopin on line two",
		"@chopin\u00a0please",
	])("mentions: %p", (body) => {
		expect(mentionsPlanner(body)).toBe(true);
	});

	test.each([
		"",
		"no mention here",
		"chopin without the at",
		"@chopinx",
		"@chopin-bot",
		"@chopin_bot",
		"@chopin2",
		"me@chopin.dev",
		"see https://x.example/@chopin",
		"@chopin/core is a team",
		"@chopin.dev",
		"\\@chopin escaped",
		"@@chopin",
		"`@chopin` in a code span",
		"``a `@chopin` b`` in a double code span",
		"```\n@chopin in a fence\n```",
		"~~~md\n@chopin in a tilde fence\n~~~",
		"    @chopin in an indented code block",
		"- item\n\n      @chopin indented code in a list",
		"```\nan unclosed fence runs to the end\n@chopin",
	])("does not mention: %p", (body) => {
		expect(mentionsPlanner(body)).toBe(false);
	});

	test("a mention outside code counts even when another is inside", () => {
		expect(mentionsPlanner("`@chopin` and also @chopin")).toBe(true);
		expect(mentionsPlanner("```\n@chopin\n```\n@chopin")).toBe(true);
	});

	test("long messages stay fast", () => {
		const body = `${"word ".repeat(4000)}${"x".repeat(20_000)} @chopin`;
		expect(mentionsPlanner(body)).toBe(true);
	});
});
