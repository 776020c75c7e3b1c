import { describe, expect, test } from "bun:test";
import { type ParseOptions, parseClientFrame } from "../parse";
import { clientMessages, fullCard } from "../testing/examples";
import { ALL_FEATURES, objectPaths, repeat, withExtraField, withField } from "../testing/helpers";
import { CLIENT_MESSAGE_SCHEMAS, clientMessageSchema } from "./client-messages";

const all: ParseOptions = { features: ALL_FEATURES };
const parse = (value: unknown, options: ParseOptions = all) =>
	parseClientFrame(JSON.stringify(value), options);

function expectRefused(value: unknown, fragment?: string) {
	const result = parse(value);
	expect(result.ok).toBe(false);
	if (!result.ok) {
		expect(result.error.code).toBe("malformed-message");
		if (fragment) expect(result.error.message).toContain(fragment);
	}
}

describe("client messages", () => {
	test("the examples cover every client message type", () => {
		expect(Object.keys(clientMessages).sort()).toEqual(Object.keys(CLIENT_MESSAGE_SCHEMAS).sort());
		const types: string[] = clientMessageSchema.options.map((o) => o.shape.type.value);
		expect(types.sort()).toEqual(Object.keys(CLIENT_MESSAGE_SCHEMAS).sort());
	});

	for (const [type, example] of Object.entries(clientMessages)) {
		test(`${type}: the spec's example parses as written`, () => {
			const result = parse(example);
			expect(result).toEqual({ ok: true, message: example as never });
		});

		test(`${type}: an unknown field is refused at every level outside the catalog`, () => {
			const paths = objectPaths(example, ["catalog"]);
			expect(paths.length).toBeGreaterThan(0);
			for (const path of paths) {
				const result = parse(withExtraField(example, path));
				expect(result.ok, `extra field at ${JSON.stringify(path)}`).toBe(false);
				if (!result.ok) expect(result.error.message).toContain('unknown field "unlisted"');
			}
		});
	}

	test("attach: document and checkout limits, in characters", () => {
		const attach = clientMessages.attach;
		expect(parse(withField(attach, ["document"], repeat(2048))).ok).toBe(true);
		expectRefused(withField(attach, ["document"], repeat(2049)), "document is longer than 2048 characters");
		expectRefused(withField(attach, ["document"], ""), "document must not be empty");
		expect(parse(withField(attach, ["checkout", "origin"], repeat(2048))).ok).toBe(true);
		expectRefused(withField(attach, ["checkout", "origin"], repeat(2049)), "checkout.origin");
		expect(parse(withField(attach, ["checkout", "branch"], repeat(256))).ok).toBe(true);
		expectRefused(withField(attach, ["checkout", "branch"], repeat(257)), "checkout.branch");
		expect(parse(withField(attach, ["checkout", "head"], repeat(128))).ok).toBe(true);
		expectRefused(withField(attach, ["checkout", "head"], repeat(129)), "checkout.head");
		expect(parse({ type: "attach", version: 1, document: "doc-1" }).ok).toBe(true);
		expect(parse(withField(attach, ["checkout"], {})).ok).toBe(true);
	});

	test("attach: another version parses, so the server can answer unsupported-version", () => {
		expect(parse(withField(clientMessages.attach, ["version"], 2)).ok).toBe(true);
		expectRefused(withField(clientMessages.attach, ["version"], 0), "version");
		expectRefused(withField(clientMessages.attach, ["version"], 1.5), "version must be an integer");
		expectRefused(withField(clientMessages.attach, ["version"], "1"), "version must be a number");
		expectRefused(withField(clientMessages.attach, ["version"], undefined), "version is required");
	});

	test("ids are 1 to 128 characters wherever they appear", () => {
		const cases: [keyof typeof clientMessages, (string | number)[]][] = [
			["started", ["session"]],
			["tools", ["turn"]],
			["host-tool-call", ["toolCallId"]],
			["input-request", ["request"]],
			["input-request", ["workflowRunId"]],
			["input-request", ["workflowStageId"]],
			["input-request", ["rootRunId"]],
			["input-cancel", ["request"]],
			["runs", ["active", 0]],
			["runs", ["cards", 0, "id"]],
			["runs", ["cards", 0, "stages", 0, "id"]],
			["runs", ["cards", 0, "stages", 0, "parentIds", 0]],
			["control-result", ["request"]],
			["resume", ["sessions", 0, "session"]],
			["resume", ["sessions", 0, "requests", 0]],
			["input-received", ["request"]],
			["part", ["part", "id"]],
		];
		for (const [type, path] of cases) {
			const example = clientMessages[type];
			expect(parse(withField(example, path, repeat(128))).ok, `${type} ${path.join(".")} at 128`).toBe(true);
			expectRefused(withField(example, path, repeat(129)), "longer than 128 characters");
			expectRefused(withField(example, path, ""), "must not be empty");
		}
	});

	test("a length is counted in characters (code points), not UTF-16 units", () => {
		// 128 emoji are 256 UTF-16 units but 128 characters.
		expect(parse(withField(clientMessages.started, ["session"], repeat(128, "😀"))).ok).toBe(true);
		expectRefused(
			withField(clientMessages.started, ["session"], repeat(129, "😀")),
			"session is longer than 128",
		);
		expect(parse(withField(clientMessages["start-failed"], ["message"], repeat(4000, "😀"))).ok).toBe(true);
	});

	test("messages are cut to 4000 characters: a longer one is refused", () => {
		const cases: [keyof typeof clientMessages, (string | number)[]][] = [
			["start-failed", ["message"]],
			["turn-end", ["message"]],
			["control-result", ["message"]],
			["part", ["part"]],
		];
		for (const [type, path] of cases) {
			const example = clientMessages[type];
			const make = (n: number) =>
				type === "part"
					? withField(example, path, { type: "error", error: repeat(n) })
					: withField(example, path, repeat(n));
			expect(parse(make(4000)).ok, `${type} at 4000`).toBe(true);
			expectRefused(make(4001), "longer than 4000 characters");
		}
	});

	test("tools: names are 1 to 128 characters, at most 256 of them", () => {
		const tools = clientMessages.tools;
		expect(
			parse(
				withField(
					tools,
					["names"],
					Array.from({ length: 256 }, (_, i) => `tool_${i}`),
				),
			).ok,
		).toBe(true);
		expectRefused(
			withField(
				tools,
				["names"],
				Array.from({ length: 257 }, (_, i) => `tool_${i}`),
			),
			"names has more than 256 entries",
		);
		expectRefused(withField(tools, ["names", 0], repeat(129)), "names[0] is longer than 128");
		expectRefused(withField(tools, ["names", 0], ""), "names[0] must not be empty");
	});

	test("host-tool-call: input is any string; its JSON is the server's business", () => {
		expect(parse(withField(clientMessages["host-tool-call"], ["input"], "not json")).ok).toBe(true);
		expectRefused(withField(clientMessages["host-tool-call"], ["input"], {}), "input must be a string");
		expectRefused(withField(clientMessages["host-tool-call"], ["toolName"], repeat(129)), "toolName");
	});

	test("turn-end: status is finished, failed or aborted", () => {
		for (const status of ["finished", "failed", "aborted"]) {
			expect(parse(withField(clientMessages["turn-end"], ["status"], status)).ok).toBe(true);
		}
		expectRefused(
			withField(clientMessages["turn-end"], ["status"], "done"),
			'status must be one of "finished"',
		);
	});

	test("input-request: block digest is sha256: and 64 hex digits", () => {
		const request = clientMessages["input-request"];
		expect(parse(withField(request, ["block", "digest"], `sha256:${"F".repeat(64)}`)).ok).toBe(true);
		expectRefused(
			withField(request, ["block", "digest"], `sha256:${"a".repeat(63)}`),
			"block.digest must be sha256:",
		);
		expectRefused(withField(request, ["block", "digest"], `sha1:${"a".repeat(64)}`), "block.digest");
		expectRefused(withField(request, ["block", "index"], -1), "block.index must not be negative");
		expectRefused(withField(request, ["input", "method"], "ask"), "input.method must be one of");
	});

	test("runs: active and paused hold at most 64 ids; cards at most 64", () => {
		const runs = clientMessages.runs;
		const ids = (n: number) => Array.from({ length: n }, (_, i) => `run-${i}`);
		expect(parse(withField(runs, ["active"], ids(64))).ok).toBe(true);
		expectRefused(withField(runs, ["active"], ids(65)), "active has more than 64 entries");
		expect(parse(withField(runs, ["paused"], ids(64))).ok).toBe(true);
		expectRefused(withField(runs, ["paused"], ids(65)), "paused has more than 64 entries");
		const cards = (n: number) => Array.from({ length: n }, (_, i) => ({ ...fullCard, id: `run-${i}` }));
		expect(parse(withField(runs, ["cards"], cards(64))).ok).toBe(true);
		expectRefused(withField(runs, ["cards"], cards(65)), "cards has more than 64 entries");
	});

	test("control-result: ok is a boolean", () => {
		expect(parse(withField(clientMessages["control-result"], ["ok"], false)).ok).toBe(true);
		expectRefused(withField(clientMessages["control-result"], ["ok"], "yes"), "ok must be a boolean");
	});

	test("capabilities: catalog must be an object", () => {
		expect(parse({ type: "capabilities", catalog: {} }).ok).toBe(true);
		expectRefused({ type: "capabilities", catalog: [] }, "catalog must be an object");
		expectRefused({ type: "capabilities" }, "catalog is required");
	});
});
