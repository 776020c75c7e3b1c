import { describe, expect, test } from "bun:test";
import { refusal } from "../testing/refusal";
import { plannerCommandFromEnv, splitCommandLine } from "./command-line";

describe("splitCommandLine", () => {
	test.each<[string, string[]]>([
		["my-planner --flag", ["my-planner", "--flag"]],
		["  a \t b\nc  ", ["a", "b", "c"]],
		["'two words'", ["two words"]],
		['"two words"', ["two words"]],
		['--label="two words"', ["--label=two words"]],
		["--label='two words'", ["--label=two words"]],
		["a'b'c\"d\"e", ["abcde"]],
	])("%j splits into %j", (input, expected) => {
		expect(splitCommandLine(input)).toEqual(expected);
	});

	test("single quotes keep everything literal, backslashes and $ included", () => {
		expect(splitCommandLine("'a\\b $HOME \\'")).toEqual(["a\\b $HOME \\"]);
		expect(splitCommandLine(String.raw`'a\"b'`)).toEqual([String.raw`a\"b`]);
	});

	test("outside quotes a backslash escapes any character", () => {
		expect(splitCommandLine(String.raw`two\ words`)).toEqual(["two words"]);
		expect(splitCommandLine(String.raw`\'quoted\'`)).toEqual(["'quoted'"]);
		expect(splitCommandLine(String.raw`\"x\"`)).toEqual(['"x"']);
		expect(splitCommandLine(String.raw`a\\b`)).toEqual([String.raw`a\b`]);
		expect(splitCommandLine(String.raw`\|\;\&\<\>\(\)`)).toEqual(["|;&<>()"]);
		expect(splitCommandLine(String.raw`\$HOME`)).toEqual(["$HOME"]);
		expect(splitCommandLine(String.raw`\n`)).toEqual(["n"]);
	});

	test("a backslash-newline joins lines outside quotes and inside double quotes", () => {
		expect(splitCommandLine("my-planner \\\n  --flag")).toEqual(["my-planner", "--flag"]);
		expect(splitCommandLine("ab\\\ncd")).toEqual(["abcd"]);
		expect(splitCommandLine('"ab\\\ncd"')).toEqual(["abcd"]);
		// ...but not inside single quotes, where both characters stay.
		expect(splitCommandLine("'ab\\\ncd'")).toEqual(["ab\\\ncd"]);
	});

	test('inside double quotes only \\$ \\` \\" \\\\ and newline are escapes', () => {
		expect(splitCommandLine(String.raw`"a\$b"`)).toEqual(["a$b"]);
		expect(splitCommandLine('"a\\`b"')).toEqual(["a`b"]);
		expect(splitCommandLine(String.raw`"a\"b"`)).toEqual(['a"b']);
		expect(splitCommandLine(String.raw`"a\\b"`)).toEqual([String.raw`a\b`]);
		expect(splitCommandLine(String.raw`"a\nb"`)).toEqual([String.raw`a\nb`]);
		expect(splitCommandLine(String.raw`"a\'b"`)).toEqual([String.raw`a\'b`]);
		expect(splitCommandLine(String.raw`"C:\Program Files\x"`)).toEqual([String.raw`C:\Program Files\x`]);
	});

	test("a lone final backslash stays, as sh -c keeps it", () => {
		expect(splitCommandLine("a\\")).toEqual(["a\\"]);
	});

	test("nothing expands: variables, command substitution, tilde, globs, comments, braces", () => {
		const braces = ["$", "{USER}"].join("");
		expect(splitCommandLine(`echo $HOME ${braces} \`id\` ~ ~/x *.ts ? [ab] # not-a-comment {a,b}`)).toEqual([
			"echo",
			"$HOME",
			braces,
			"`id`",
			"~",
			"~/x",
			"*.ts",
			"?",
			"[ab]",
			"#",
			"not-a-comment",
			"{a,b}",
		]);
	});

	test("double quotes keep $ and globs literal too", () => {
		expect(splitCommandLine('"$HOME/*.ts"')).toEqual(["$HOME/*.ts"]);
	});

	test.each(["|", "&", ";", "<", ">", "(", ")"])("an unquoted %s is refused as an operator", (op) => {
		const error = refusal(() => splitCommandLine(`a ${op} b`));
		expect(error.code).toBe("planner-command-operator");
		expect(error.message).toContain(`"${op}" at position 3`);
		expect(error.hint).toContain("without a shell");
		expect(error.exitCode).toBe(2);
	});

	test("operators inside quotes are plain characters", () => {
		expect(splitCommandLine(`"a | b" 'c && d' "x>y"`)).toEqual(["a | b", "c && d", "x>y"]);
	});

	test("$(...) is refused for its parenthesis when unquoted, kept when quoted", () => {
		expect(refusal(() => splitCommandLine("echo $(id)")).code).toBe("planner-command-operator");
		expect(splitCommandLine("echo '$(id)'")).toEqual(["echo", "$(id)"]);
	});

	test.each([
		["'abc", "single", 1],
		['"abc', "double", 1],
		["x 'a'b'", "single", 7],
		['x "a\\"', "double", 3],
		['--label="two words', "double", 9],
	])("%j has an unmatched %s quote at %d", (input, kind, position) => {
		const error = refusal(() => splitCommandLine(input));
		expect(error.code).toBe("planner-command-unmatched-quote");
		expect(error.message).toBe(
			`The planner command has an unmatched ${kind} quote (${kind === "single" ? "'" : '"'}) at position ${position}.`,
		);
		expect(error.exitCode).toBe(2);
	});

	test("an escaped quote is not an unmatched one", () => {
		expect(splitCommandLine(String.raw`it\'s`)).toEqual(["it's"]);
		expect(splitCommandLine(`"it's"`)).toEqual(["it's"]);
		expect(splitCommandLine(`'say "hi"'`)).toEqual(['say "hi"']);
	});

	test("an empty command or an empty word is refused", () => {
		expect(refusal(() => splitCommandLine("")).code).toBe("planner-command-empty");
		expect(refusal(() => splitCommandLine(" \t\n")).code).toBe("planner-command-empty");
		expect(refusal(() => splitCommandLine("\\\n")).code).toBe("planner-command-empty");
		const empty = refusal(() => splitCommandLine("my-planner ''"));
		expect(empty.code).toBe("planner-command-empty");
		expect(empty.message).toContain("empty word");
		expect(refusal(() => splitCommandLine('"" x')).code).toBe("planner-command-empty");
	});

	test("a NUL character is refused", () => {
		expect(refusal(() => splitCommandLine("a\0b")).code).toBe("planner-command-invalid");
	});

	test("unicode survives", () => {
		expect(splitCommandLine("plan --name 'Café ☕' naïve")).toEqual(["plan", "--name", "Café ☕", "naïve"]);
	});
});

describe("CHOPIN_PLANNER_COMMAND", () => {
	test("unset or blank is undefined", () => {
		expect(plannerCommandFromEnv(undefined)).toBeUndefined();
		expect(plannerCommandFromEnv("  ")).toBeUndefined();
	});

	test("a JSON array of words is taken as is, no splitting or expanding", () => {
		expect(plannerCommandFromEnv('["my-planner","--name","two words","$HOME","a|b"]')).toEqual([
			"my-planner",
			"--name",
			"two words",
			"$HOME",
			"a|b",
		]);
	});

	test.each([
		["my-planner --flag", "is not valid JSON"],
		['"my-planner"', "is not an array of strings"],
		['{"command":"x"}', "is not an array of strings"],
		["[]", "the command has no words"],
		['["x", 1]', "is not an array of strings"],
		['["x", ""]', "a word is empty"],
		['["", "x"]', "a word is empty"],
		['["a\\u0000b"]', "NUL"],
	])("%j is refused (%s)", (value, fragment) => {
		const error = refusal(() => plannerCommandFromEnv(value));
		expect(error.code).toBe("planner-command-invalid");
		expect(error.message).toContain(fragment);
		expect(error.message).toStartWith("CHOPIN_PLANNER_COMMAND ");
		expect(error.hint).toContain("JSON array");
	});
});
