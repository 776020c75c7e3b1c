import { describe, expect, test } from "bun:test";
import { parseClientFrame } from "../parse";
import { parts, usage } from "../testing/examples";
import { objectPaths, repeat, withExtraField, withField } from "../testing/helpers";
import { FINISH_REASONS, streamPartSchema } from "./parts";

/** Parses a part inside a part message, as the server reads it. */
function parsePart(part: unknown) {
	return parseClientFrame(JSON.stringify({ type: "part", session: "s1", turn: "t1", part }));
}

function expectRefused(part: unknown, fragment: string) {
	const result = parsePart(part);
	expect(result.ok).toBe(false);
	if (!result.ok) expect(result.error.message).toContain(fragment);
}

describe("stream parts", () => {
	test("the examples cover every part type", () => {
		expect(Object.keys(parts).sort()).toEqual(streamPartSchema.options.map((o) => o.shape.type.value).sort());
	});

	for (const [type, example] of Object.entries(parts)) {
		test(`${type}: the spec's example parses; an unknown field is refused at every level`, () => {
			expect(parsePart(example).ok).toBe(true);
			for (const path of objectPaths(example, ["result"])) {
				const result = parsePart(withExtraField(example, path));
				expect(result.ok, `extra field at ${JSON.stringify(path)}`).toBe(false);
			}
		});
	}

	test("optional fields may be left out", () => {
		const minimal = [
			{ type: "stream-start" },
			{ type: "tool-input-start", id: "c", toolName: "t" },
			{ type: "tool-call", toolCallId: "c", toolName: "t", input: "{}", providerExecuted: true },
			{ type: "tool-result", toolCallId: "c", toolName: "t", result: null },
			{
				type: "finish-step",
				finishReason: { unified: "other" },
				usage: { inputTokens: {}, outputTokens: {} },
			},
		];
		for (const part of minimal) expect(parsePart(part).ok).toBe(true);
	});

	test("an unknown part type is refused naming the field", () => {
		expectRefused({ type: "source", id: "x" }, "part.type must be");
		expectRefused({ id: "x" }, "part.type is required");
	});

	test("tool-call must say providerExecuted: true", () => {
		expectRefused(
			withField(parts["tool-call"], ["providerExecuted"], false),
			"part.providerExecuted must be true",
		);
		expectRefused(withField(parts["tool-call"], ["providerExecuted"], undefined), "part.providerExecuted");
	});

	test("tool-result needs a result, which may be any JSON", () => {
		expectRefused(withField(parts["tool-result"], ["result"], undefined), "part.result");
		expect(parsePart(withField(parts["tool-result"], ["result"], "text")).ok).toBe(true);
		expect(parsePart(withField(parts["tool-result"], ["result"], { content: [{ extra: 1 }] })).ok).toBe(true);
	});

	test("ids, tool names and finishReason.raw are bounded", () => {
		expect(parsePart(withField(parts["text-delta"], ["id"], repeat(128))).ok).toBe(true);
		expectRefused(withField(parts["text-delta"], ["id"], repeat(129)), "part.id is longer than 128");
		expectRefused(withField(parts["tool-call"], ["toolCallId"], repeat(129)), "part.toolCallId");
		expectRefused(withField(parts["tool-input-start"], ["toolName"], repeat(129)), "part.toolName");
		expect(parsePart(withField(parts.finish, ["finishReason", "raw"], repeat(128))).ok).toBe(true);
		expectRefused(withField(parts.finish, ["finishReason", "raw"], repeat(129)), "part.finishReason.raw");
		expect(parsePart(withField(parts["tool-input-start"], ["title"], repeat(4000))).ok).toBe(true);
		expectRefused(withField(parts["tool-input-start"], ["title"], repeat(4001)), "part.title");
	});

	test("deltas, input and modelId are bounded only by the frame", () => {
		expect(parsePart(withField(parts["text-delta"], ["delta"], repeat(1_000_000))).ok).toBe(true);
		expect(parsePart(withField(parts["tool-call"], ["input"], repeat(1_000_000))).ok).toBe(true);
		expect(parsePart(withField(parts["stream-start"], ["modelId"], repeat(10_000))).ok).toBe(true);
	});

	test("finishReason.unified is one of the six reasons", () => {
		for (const unified of FINISH_REASONS) {
			expect(parsePart(withField(parts.finish, ["finishReason", "unified"], unified)).ok).toBe(true);
		}
		expectRefused(
			withField(parts.finish, ["finishReason", "unified"], "done"),
			"part.finishReason.unified must be",
		);
	});

	test("usage counts are non-negative integers; inputTokens and outputTokens are required", () => {
		expect(parsePart({ ...parts["finish-step"], usage }).ok).toBe(true);
		expectRefused(
			withField(parts["finish-step"], ["usage", "inputTokens", "total"], -1),
			"must not be negative",
		);
		expectRefused(
			withField(parts["finish-step"], ["usage", "outputTokens", "text"], 1.5),
			"must be an integer",
		);
		expectRefused(
			withField(parts["finish-step"], ["usage", "outputTokens"], undefined),
			"usage.outputTokens is required",
		);
		expectRefused(
			withField(parts.finish, ["totalUsage", "inputTokens"], undefined),
			"totalUsage.inputTokens",
		);
	});

	test("an error part's text is at most 4000 characters", () => {
		expect(parsePart({ type: "error", error: repeat(4000, "é") }).ok).toBe(true);
		expectRefused({ type: "error", error: repeat(4001) }, "part.error is longer than 4000 characters");
	});
});
