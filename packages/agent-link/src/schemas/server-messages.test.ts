import { describe, expect, test } from "bun:test";
import { REFUSAL_CODES } from "../closing";
import { type ParseOptions, parseServerFrame } from "../parse";
import { retryTurns, serverMessages } from "../testing/examples";
import { ALL_FEATURES, objectPaths, repeat, withExtraField, withField } from "../testing/helpers";
import { SERVER_MESSAGE_SCHEMAS, serverMessageSchema } from "./server-messages";

const all: ParseOptions = { features: ALL_FEATURES };
const parse = (value: unknown, options: ParseOptions = all) =>
	parseServerFrame(JSON.stringify(value), options);

function expectRefused(value: unknown, fragment?: string) {
	const result = parse(value);
	expect(result.ok).toBe(false);
	if (!result.ok) {
		expect(result.error.code).toBe("malformed-message");
		if (fragment) expect(result.error.message).toContain(fragment);
	}
}

/** Fields whose value is any JSON, where unknown keys are data, not protocol. */
const JSON_FIELDS = ["output", "value", "inputSchema", "schema"];

describe("server messages", () => {
	test("the examples cover every server message type", () => {
		expect(Object.keys(serverMessages).sort()).toEqual(Object.keys(SERVER_MESSAGE_SCHEMAS).sort());
		const types: string[] = serverMessageSchema.options.map((o) => o.shape.type.value);
		expect(types.sort()).toEqual(Object.keys(SERVER_MESSAGE_SCHEMAS).sort());
	});

	for (const [type, example] of Object.entries(serverMessages)) {
		test(`${type}: the spec's example parses as written`, () => {
			expect(parse(example)).toEqual({ ok: true, message: example as never });
		});

		test(`${type}: an unknown field is refused at every level`, () => {
			for (const path of objectPaths(example, JSON_FIELDS)) {
				const result = parse(withExtraField(example, path));
				expect(result.ok, `extra field at ${JSON.stringify(path)}`).toBe(false);
				if (!result.ok) expect(result.error.message).toContain('unknown field "unlisted"');
			}
		});
	}

	test("the retry-turn examples parse", () => {
		for (const turn of retryTurns) expect(parse(turn).ok).toBe(true);
	});

	test("JSON fields hold any JSON, unknown keys included", () => {
		expect(
			parse(withField(serverMessages["host-tool-result"], ["output"], { anything: [1, null, "x"] })).ok,
		).toBe(true);
		expect(parse(withField(serverMessages["host-tool-result"], ["output"], null)).ok).toBe(true);
		expectRefused(withField(serverMessages["host-tool-result"], ["output"], undefined), "output");
		expect(parse(withField(serverMessages.turn, ["tools", 0, "inputSchema"], { $defs: { a: {} } })).ok).toBe(
			true,
		);
	});

	test("attached: repository is owner/name of at most 257 characters; url at most 2048", () => {
		const attached = serverMessages.attached;
		expect(parse(withField(attached, ["document", "repository"], `${repeat(128)}/${repeat(128)}`)).ok).toBe(
			true,
		);
		expectRefused(
			withField(attached, ["document", "repository"], `${repeat(129)}/${repeat(128)}`),
			"document.repository is longer than 257 characters",
		);
		expectRefused(
			withField(attached, ["document", "repository"], "score"),
			"document.repository must be owner/name",
		);
		expect(parse(withField(attached, ["document", "url"], repeat(2048))).ok).toBe(true);
		expectRefused(withField(attached, ["document", "url"], repeat(2049)), "document.url");
		expectRefused(withField(attached, ["document", "id"], repeat(129)), "document.id");
		expect(parse(withField(attached, ["document", "title"], repeat(4000))).ok).toBe(true);
		expectRefused(withField(attached, ["document", "title"], repeat(4001)), "document.title");
		expectRefused(withField(attached, ["version"], 2), "version must be 1");
	});

	test("attached: features lists at most 16 names of the feature-name shape", () => {
		const attached = serverMessages.attached;
		const names = (n: number) => Array.from({ length: n }, (_, i) => `feature-${i}`);
		expect(parse(withField(attached, ["features"], names(16))).ok).toBe(true);
		expectRefused(withField(attached, ["features"], names(17)), "features has more than 16 entries");
		expect(parse(withField(attached, ["features"], [])).ok).toBe(true);
		expect(parse(withField(attached, ["features"], ["a", `Z${repeat(127)}`, "x.y_z-1"])).ok).toBe(true);
		for (const bad of ["", "-a", ".a", `a${repeat(128)}`, "a b", "a:b", "é"]) {
			expectRefused(withField(attached, ["features"], [bad]), "features[0]");
		}
		expect(parse(withField(attached, ["features"], undefined)).ok).toBe(true);
	});

	test("refused: every refusal code; retry only on unavailable", () => {
		for (const code of REFUSAL_CODES) {
			expect(parse({ type: "refused", code, message: "No." }).ok).toBe(true);
		}
		expect(parse({ type: "refused", code: "unavailable", message: "Try again.", retry: true }).ok).toBe(true);
		expectRefused(
			{ type: "refused", code: "planner-attached", message: "No.", retry: true },
			"retry may be true only when code is unavailable",
		);
		expectRefused({ type: "refused", code: "nope", message: "No." }, "code must be");
		expectRefused(
			{ type: "refused", code: "unavailable", message: repeat(4001) },
			"message is longer than 4000",
		);
	});

	test("start and fork: mode is planner or isolated", () => {
		expect(parse(withField(serverMessages.start, ["mode"], "isolated")).ok).toBe(true);
		expectRefused(withField(serverMessages.start, ["mode"], "chat"), 'mode must be "planner" or "isolated"');
		expect(parse(withField(serverMessages.fork, ["from"], { session: "s1" })).ok).toBe(true);
		expectRefused(withField(serverMessages.fork, ["from", "session"], ""), "from.session must not be empty");
	});

	test("turn: at most 256 tools, descriptions up to 64,000 characters", () => {
		const turn = serverMessages.turn;
		const tools = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `tool_${i}` }));
		expect(parse(withField(turn, ["tools"], tools(256))).ok).toBe(true);
		expectRefused(withField(turn, ["tools"], tools(257)), "tools has more than 256 entries");
		expect(parse(withField(turn, ["tools", 0, "description"], repeat(64_000))).ok).toBe(true);
		expectRefused(withField(turn, ["tools", 0, "description"], repeat(64_001)), "tools[0].description");
		expectRefused(withField(turn, ["tools", 0, "name"], repeat(129)), "tools[0].name is longer than 128");
		expectRefused(withField(turn, ["tools"], undefined), "tools is required");
	});

	test("turn: prompt and instructions are bounded only by the frame", () => {
		expect(parse(withField(serverMessages.turn, ["prompt"], repeat(500_000))).ok).toBe(true);
		expect(parse(withField(serverMessages.turn, ["instructions"], repeat(500_000))).ok).toBe(true);
	});

	test("turn: model and thinkingLevel are never empty", () => {
		expectRefused(withField(serverMessages.turn, ["model"], ""), "model must not be empty");
		expectRefused(withField(serverMessages.turn, ["thinkingLevel"], ""), "thinkingLevel must not be empty");
		expect(parse(withField(serverMessages.turn, ["model"], repeat(10_000))).ok).toBe(true);
	});

	test("turn: retry needs the message it runs again", () => {
		expectRefused(
			withField(serverMessages.turn, ["message"], undefined),
			"retry may be true only with the message",
		);
		expect(
			parse(withField(withField(serverMessages.turn, ["message"], undefined), ["retry"], false)).ok,
		).toBe(true);
	});

	test("turn: responseFormat is text, or json with optional schema, name and description", () => {
		const turn = serverMessages.turn;
		expect(parse(withField(turn, ["responseFormat"], { type: "text" })).ok).toBe(true);
		expect(parse(withField(turn, ["responseFormat"], { type: "json" })).ok).toBe(true);
		expectRefused(withField(turn, ["responseFormat"], { type: "text", name: "x" }), 'unknown field "name"');
		expectRefused(withField(turn, ["responseFormat", "name"], repeat(129)), "responseFormat.name");
		expectRefused(
			withField(turn, ["responseFormat", "description"], repeat(4001)),
			"responseFormat.description",
		);
		expectRefused(withField(turn, ["responseFormat", "type"], "xml"), "responseFormat.type must be");
	});

	test("input-result: failed has a message and no value; the others a value and no message", () => {
		const base = { type: "input-result", request: "req-1" };
		expect(parse({ ...base, status: "failed", message: "16 requests are already open." }).ok).toBe(true);
		expectRefused({ ...base, status: "failed" }, "message is required when status is failed");
		expectRefused({ ...base, status: "failed", message: "x", value: null }, "value must be absent");
		expect(parse({ ...base, status: "expired", value: null }).ok).toBe(true);
		expect(parse({ ...base, status: "cancelled", value: false }).ok).toBe(true);
		expectRefused({ ...base, status: "answered" }, "value is required when status is answered");
		expectRefused({ ...base, status: "answered", value: true, message: "x" }, "message must be absent");
		expectRefused({ ...base, status: "done", value: true }, "status must be one of");
	});

	test("restarting: reconnectWithinMs is a whole number of milliseconds", () => {
		expect(parse({ type: "restarting", reconnectWithinMs: 0 }).ok).toBe(true);
		expectRefused({ type: "restarting", reconnectWithinMs: -1 }, "reconnectWithinMs must not be negative");
		expectRefused({ type: "restarting", reconnectWithinMs: 1.5 }, "reconnectWithinMs must be an integer");
	});

	test("error: code is malformed-message, protocol or message-too-large", () => {
		for (const code of ["malformed-message", "protocol", "message-too-large"]) {
			expect(parse({ type: "error", code, message: "No." }).ok).toBe(true);
		}
		expectRefused({ type: "error", code: "binary-frame", message: "No." }, "code must be one of");
	});

	test("stop and resume (Resume Planner): run is optional", () => {
		expect(parse({ type: "stop", request: "r", session: "s" }).ok).toBe(true);
		expect(parse({ type: "resume", request: "r", session: "s" }).ok).toBe(true);
		expectRefused({ type: "resume", sessions: [] }, "request is required");
	});
});
