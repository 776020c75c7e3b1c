import { describe, expect, test } from "bun:test";
import { Option } from "commander";
import { splitAtDoubleDash } from "./command-tail";

const options = [
	new Option("--label <name>"),
	new Option("--env <KEY=VALUE>"),
	new Option("--no-sandbox"),
	new Option("-n, --lines <count>"),
	new Option("--color [when]"),
];

describe("splitAtDoubleDash", () => {
	test.each<[string[], string[], string[] | undefined]>([
		[["./repo"], ["./repo"], undefined],
		[["--", "gemini", "--acp"], [], ["gemini", "--acp"]],
		[
			["./repo", "--label", "x", "--", "gemini", "--acp"],
			["./repo", "--label", "x"],
			["gemini", "--acp"],
		],
		[["--label", "--", "--", "gemini"], ["--label", "--"], ["gemini"]],
		[["--label=--", "--", "x"], ["--label=--"], ["x"]],
		[["-n", "--", "--", "x"], ["-n", "--"], ["x"]],
		[["--no-sandbox", "--", "x", "--", "y"], ["--no-sandbox"], ["x", "--", "y"]],
		[["--"], [], []],
		[["--color", "--", "x"], ["--color"], ["x"]],
		[["--color", "auto", "--", "x"], ["--color", "auto"], ["x"]],
		[["--unknown", "--", "x"], ["--unknown"], ["x"]],
	])("%j -> %j + %j", (args, head, tail) => {
		expect(splitAtDoubleDash(args, options)).toEqual({ head, tail });
	});
});
