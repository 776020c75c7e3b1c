import { afterEach, describe, expect, test } from "bun:test";
import { runCli } from "../program/program";
import { createTestContext, type TestContext } from "../testing/context";
import { parse, parseError } from "../testing/program";
import type { ConnectOptions } from "./connect";

let ctx: TestContext;
const contexts: TestContext[] = [];
afterEach(() => {
	for (const context of contexts.splice(0)) context.cleanup();
});

function fresh(options: Parameters<typeof createTestContext>[0] = {}): TestContext {
	ctx = createTestContext(options);
	contexts.push(ctx);
	return ctx;
}

async function connect(argv: string[], env: Record<string, string> = {}): Promise<ConnectOptions> {
	fresh({ cwd: "/home/me/src/score", env });
	const parsed = await parse(["connect", ...argv], ctx);
	expect(parsed?.command).toBe("connect");
	return parsed!.options as ConnectOptions;
}

async function connectError(argv: string[], env: Record<string, string> = {}) {
	fresh({ cwd: "/home/me/src/score", env });
	return parseError(["connect", ...argv], ctx);
}

const defaults: ConnectOptions = {
	checkout: "/home/me/src/score",
	planner: { documents: [], env: {}, sandbox: { enabled: true, write: [] } },
	run: true,
};

describe("connect: parse half", () => {
	test("no arguments: the current directory, sandbox on, nothing else", async () => {
		expect(await connect([])).toEqual(defaults);
	});

	test("a checkout argument is resolved against the working directory", async () => {
		expect((await connect(["../other"])).checkout).toBe("/home/me/src/other");
		expect((await connect(["/abs/path"])).checkout).toBe("/abs/path");
	});

	test("everything at once, with the ACP command after --", async () => {
		const options = await connect([
			"./sub",
			"--server",
			"https://Chopin.Example/",
			"--label",
			" my laptop ",
			"--planner",
			"https://chopin.example/octo-org/score/plan",
			"--planner",
			"doc_123",
			"--planner-command",
			'my-planner --name="two words"',
			"--agent",
			"copilot",
			"--env",
			"API_KEY=s3cret=with=equals",
			"--env",
			"EMPTY=",
			"--sandbox-write",
			"../cache",
			"--sandbox-write",
			"/tmp/x",
			"--",
			"gemini",
			"--acp",
			"--label",
			"not-ours",
		]);
		expect(options).toEqual({
			checkout: "/home/me/src/score/sub",
			server: "https://chopin.example",
			label: "my laptop",
			planner: {
				documents: ["https://chopin.example/octo-org/score/plan", "doc_123"],
				command: ["my-planner", "--name=two words"],
				agent: "copilot",
				env: { API_KEY: "s3cret=with=equals", EMPTY: "" },
				sandbox: { enabled: true, write: ["/home/me/src/cache", "/tmp/x"] },
			},
			acpCommand: ["gemini", "--acp", "--label", "not-ours"],
			run: true,
		});
	});

	test("--no-run pairs and configures without serving", async () => {
		expect((await connect(["--no-run"])).run).toBe(false);
	});

	test("--opt=value forms work and a repeated --env key keeps the last value", async () => {
		const options = await connect([
			"--label=two words",
			"--env=A=1",
			"--env",
			"A=2",
			"--server=http://localhost:3000",
		]);
		expect(options.label).toBe("two words");
		expect(options.planner.env).toEqual({ A: "2" });
		expect(options.server).toBe("http://localhost:3000");
	});

	test("--no-sandbox turns the sandbox off", async () => {
		expect((await connect(["--no-sandbox"])).planner.sandbox).toEqual({ enabled: false, write: [] });
	});

	test("-- with an ACP command and no checkout", async () => {
		const options = await connect(["--", "npx", "@agentclientprotocol/claude-agent-acp"]);
		expect(options.checkout).toBe("/home/me/src/score");
		expect(options.acpCommand).toEqual(["npx", "@agentclientprotocol/claude-agent-acp"]);
	});

	test("an ACP command quoted whole after -- is split into words as --planner-command is", async () => {
		const options = await connect(["--", "npx 'my agent' --acp"]);
		expect(options.acpCommand).toEqual(["npx", "my agent", "--acp"]);
		// Words the shell already split stay as they are, blanks and all.
		expect((await connect(["--", "/opt/my agent/bin/acp", "--x"])).acpCommand).toEqual([
			"/opt/my agent/bin/acp",
			"--x",
		]);
		await expect(connect(["--", "npx 'my agent"])).rejects.toMatchObject({
			code: "acp-command-unmatched-quote",
		});
		await expect(connect(["--", "agent | tee log"])).rejects.toMatchObject({ code: "acp-command-operator" });
	});

	test("a label value of -- is a label, not the separator", async () => {
		const options = await connect(["--label", "--", "--", "x"]);
		expect(options.label).toBe("--");
		expect(options.acpCommand).toEqual(["x"]);
	});

	test("CHOPIN_PLANNER_COMMAND is used when --planner-command is absent", async () => {
		const fromEnv = await connect([], { CHOPIN_PLANNER_COMMAND: '["my planner","--x"]' });
		expect(fromEnv.planner.command).toEqual(["my planner", "--x"]);
		const flagWins = await connect(["--planner-command", "flag-planner"], {
			CHOPIN_PLANNER_COMMAND: "not json, ignored",
		});
		expect(flagWins.planner.command).toEqual(["flag-planner"]);
	});
});

describe("connect: refusals", () => {
	test.each<[string, string[], string, Record<string, string>?]>([
		["usage", ["gemini", "--acp"], "Unknown option '--acp'."],
		["usage", ["a", "b"], "takes one checkout"],
		["usage", ["--server"], "argument missing"],
		["acp-command-empty", ["--"], "Nothing follows `--`"],
		["acp-command-empty", ["--", ""], "empty word"],
		["server-url-invalid", ["--server", "chopin.example"], "has no scheme"],
		["server-url-invalid", ["--server", "https://chopin.example/app"], "without a path"],
		["server-url-insecure", ["--server", "http://chopin.example"], "not this machine"],
		["env-invalid", ["--env", "NOEQUALS"], "is not KEY=VALUE"],
		["env-invalid", ["--env", "=value"], "is not KEY=VALUE"],
		["env-invalid", ["--env", "1BAD=x"], "is not a valid variable name"],
		["env-invalid", ["--env", "A-B=x"], "is not a valid variable name"],
		["env-reserved", ["--env", "CHOPIN_PLANNER_TOKEN=x"], "reserved"],
		["env-reserved", ["--env", "chopin_url=x"], "reserved"],
		["planner-command-unmatched-quote", ["--planner-command", "my-planner 'oops"], "unmatched single quote"],
		["planner-command-operator", ["--planner-command", "a | b"], "unquoted"],
		["planner-command-empty", ["--planner-command", "  "], "is empty"],
		[
			"planner-command-invalid",
			[],
			"CHOPIN_PLANNER_COMMAND is not valid JSON.",
			{ CHOPIN_PLANNER_COMMAND: "my-planner" },
		],
		["sandbox-options-conflict", ["--no-sandbox", "--sandbox-write", "/x"], "--sandbox-write has no effect"],
		["option-invalid", ["--label", "   "], "--label is empty"],
		["option-invalid", ["--label", "x".repeat(101)], "--label is longer than 100"],
		["option-invalid", ["--agent", "two words"], "--agent must be a name"],
		["option-invalid", ["--planner", " "], "--planner"],
	])("%s: %j", async (code, argv, fragment, env) => {
		const error = await connectError(argv, env);
		expect(error.code).toBe(code as never);
		expect(error.message).toContain(fragment);
		expect(error.exitCode).toBe(2);
		expect(error.hint).toBeTruthy();
	});

	test("an unknown option suggests a close one, else the ACP separator", async () => {
		expect((await connectError(["--lable", "x"])).hint).toStartWith("Did you mean --label?");
		expect((await connectError(["--acp"])).hint).toContain("chopin connect -- gemini --acp");
	});
});

describe("connect: help and run half", () => {
	test("--help shows usage with the -- form and examples", async () => {
		fresh();
		expect(await parse(["connect", "--help"], ctx)).toBeUndefined();
		const help = ctx.stdout.text();
		expect(help).toContain("Usage: chopin connect [checkout] [options] [-- <ACP command...>]");
		expect(help).toContain("Examples:");
		expect(help).toContain("$ chopin connect --server https://chopin.example -- gemini --acp");
		expect(help).toContain("--planner-command <command>");
		expect(help).not.toContain("(default: [])");
	});

	test("the run half checks the options, then the checkout (exit 5), before anything else", async () => {
		fresh();
		const refused = await runCli(["connect", "--server", "http://x.example"], ctx).catch((e) => e);
		expect(refused.code).toBe("server-url-insecure");
		const error = await runCli(
			["connect", "--server", "http://127.0.0.1:9", "--", "gemini", "--acp"],
			ctx,
		).catch((e) => e);
		expect(error).toMatchObject({ code: "not-a-checkout", exitCode: 5 });
	});
});
