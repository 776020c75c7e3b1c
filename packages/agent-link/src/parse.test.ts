import { describe, expect, test } from "bun:test";
import { FEATURES, type Feature } from "./features";
import { CLIENT_TYPE_FEATURES, SERVER_TYPE_FEATURES, TURN_FIELD_FEATURES } from "./gating";
import { JSON_TOO_DEEP_MESSAGE, MAX_JSON_DEPTH } from "./json-depth";
import { MAX_FRAME_BYTES } from "./limits";
import { type ParseError, parseClientFrame, parseServerFrame, toWireError } from "./parse";
import { partSchema } from "./schemas/client-messages";
import { clientMessages, deltaCard, fullCard, serverMessages } from "./testing/examples";
import { ALL_FEATURES, withField } from "./testing/helpers";

const encoder = new TextEncoder();
const bytesOf = (text: string) => encoder.encode(text).byteLength;

/** A part message whose frame is exactly `bytes` bytes of UTF-8, filled with `char` as far as it goes. */
function frameOf(bytes: number, char: string): string {
	const base = JSON.stringify({
		type: "part",
		session: "s1",
		turn: "t1",
		part: { type: "text-delta", id: "x", delta: "" },
	});
	const fill = bytes - bytesOf(base);
	const each = bytesOf(char);
	const delta = char.repeat(Math.floor(fill / each)) + "a".repeat(fill % each);
	const frame = JSON.stringify({
		type: "part",
		session: "s1",
		turn: "t1",
		part: { type: "text-delta", id: "x", delta },
	});
	expect(bytesOf(frame)).toBe(bytes);
	return frame;
}

describe("frame size", () => {
	for (const char of ["a", "é", "€", "😀"]) {
		test(`a frame of exactly 2,097,152 bytes passes and one more byte fails (filled with ${char})`, () => {
			expect(parseClientFrame(frameOf(MAX_FRAME_BYTES, char)).ok).toBe(true);
			const over = parseClientFrame(frameOf(MAX_FRAME_BYTES + 1, char));
			expect(over).toEqual({
				ok: false,
				error: { code: "message-too-large", message: "The frame is over the 2,097,152-byte limit." },
			});
		});
	}

	test("the limit is in bytes: fewer characters than the limit can still be too many bytes", () => {
		const frame = JSON.stringify({
			type: "part",
			session: "s1",
			turn: "t1",
			part: { type: "text-delta", id: "x", delta: "€".repeat(700_000) },
		});
		expect(frame.length).toBeLessThan(MAX_FRAME_BYTES);
		expect(bytesOf(frame)).toBeGreaterThan(MAX_FRAME_BYTES);
		const result = parseClientFrame(frame);
		expect(result.ok || result.error.code).toBe("message-too-large");
		const emoji = JSON.stringify({ type: "detach", pad: "😀".repeat(600_000) });
		expect([...emoji].length).toBeLessThan(MAX_FRAME_BYTES);
		const server = parseServerFrame(emoji);
		expect(server.ok || server.error.code).toBe("message-too-large");
	});

	test("size is checked before anything else, even for a frame that is not JSON", () => {
		const result = parseServerFrame("x".repeat(MAX_FRAME_BYTES + 1));
		expect(result.ok || result.error.code).toBe("message-too-large");
	});
});

describe("binary frames", () => {
	const json = JSON.stringify(clientMessages.detach);
	const message = "Binary frames are refused: send each message as JSON in one text frame.";

	test("bytes are refused as binary-frame, whatever they hold", () => {
		const bytes = encoder.encode(json);
		for (const data of [bytes, bytes.buffer, Buffer.from(json), new DataView(bytes.buffer)]) {
			expect(parseClientFrame(data)).toEqual({ ok: false, error: { code: "binary-frame", message } });
			expect(parseServerFrame(data)).toEqual({ ok: false, error: { code: "binary-frame", message } });
		}
	});

	test("an oversized binary frame is refused for its size, naming it", () => {
		const result = parseClientFrame(new Uint8Array(MAX_FRAME_BYTES + 1));
		expect(result).toEqual({
			ok: false,
			error: {
				code: "message-too-large",
				message: "The frame is 2,097,153 bytes, over the 2,097,152-byte limit.",
			},
		});
	});

	test("bytes of a text frame (the ws package's Buffer with isBinary false) are read as UTF-8", () => {
		const text = JSON.stringify({ ...clientMessages["start-failed"], message: "Modèle indisponible 😀" });
		const result = parseClientFrame(Buffer.from(text), { isBinary: false });
		expect(result).toEqual({ ok: true, message: JSON.parse(text) });
		const invalid = parseClientFrame(new Uint8Array([0x7b, 0xff, 0x7d]), { isBinary: false });
		expect(invalid).toEqual({
			ok: false,
			error: { code: "malformed-message", message: "The frame is not valid UTF-8 text." },
		});
	});

	test("the server answers binary-frame as malformed-message and closes with 1008", () => {
		expect(toWireError({ code: "binary-frame", message })).toEqual({
			code: "malformed-message",
			close: 1008,
		});
		expect(toWireError({ code: "malformed-message", message })).toEqual({
			code: "malformed-message",
			close: 1008,
		});
		expect(toWireError({ code: "message-too-large", message })).toEqual({
			code: "message-too-large",
			close: 1009,
		});
	});
});

describe("malformed frames", () => {
	const cases: [string, string][] = [
		["not json", "The frame is not valid JSON."],
		["", "The frame is not valid JSON."],
		["[]", "A message must be a JSON object."],
		["null", "A message must be a JSON object."],
		["42", "A message must be a JSON object."],
		['"attach"', "A message must be a JSON object."],
		["{}", "A message must have a string type."],
		['{"type":7}', "A message must have a string type."],
		['{"type":"nope"}', 'Unknown client message type "nope".'],
		['{"type":"toString"}', 'Unknown client message type "toString".'],
		['{"type":"__proto__"}', 'Unknown client message type "__proto__".'],
		['{"type":"attached"}', 'Unknown client message type "attached".'],
		['{"type":"detach","now":true}', 'Invalid detach message: the message has an unknown field "now".'],
		['{"type":"started"}', "Invalid started message: session is required."],
		['{"type":"started","session":5}', "Invalid started message: session must be a string."],
		[
			'{"type":"input-cancel","request":"r","a":1,"b":2,"c":3}',
			'Invalid input-cancel message: the message has an unknown field "a" (and 2 more).',
		],
	];
	for (const [frame, message] of cases) {
		test(`${JSON.stringify(frame)} is refused: ${message}`, () => {
			expect(parseClientFrame(frame)).toEqual({ ok: false, error: { code: "malformed-message", message } });
		});
	}

	test("a client's message type is unknown to the client's parser, and the other way round", () => {
		const result = parseServerFrame(JSON.stringify(clientMessages.attach));
		expect(result.ok || result.error.message).toBe('Unknown server message type "attach".');
	});

	test("an error names the path but never echoes a large payload", () => {
		const huge = "x".repeat(100_000);
		const results = [
			parseClientFrame(JSON.stringify({ type: huge })),
			parseClientFrame(JSON.stringify({ type: "started", session: huge })),
			parseClientFrame(JSON.stringify({ type: "started", session: "s", [huge]: 1 })),
			parseClientFrame(JSON.stringify({ type: "part", session: "s", turn: "t", part: { type: huge } })),
			parseClientFrame(`{"type":"started","session":"${huge}`),
		];
		for (const result of results) {
			expect(result.ok).toBe(false);
			if (!result.ok) expect(result.error.message.length).toBeLessThan(200);
		}
		const [typeError, sessionError] = results;
		if (typeError?.ok === false) expect(typeError.error.message).toContain(`"${"x".repeat(40)}…"`);
		if (sessionError?.ok === false)
			expect(sessionError.error.message).toBe(
				"Invalid started message: session is longer than 128 characters.",
			);
	});

	test("a deep error names the whole path", () => {
		const runs = withField(clientMessages.runs, ["cards", 0, "stages", 0, "parentIds", 0], "");
		expect(parseClientFrame(JSON.stringify(runs))).toEqual({
			ok: false,
			error: {
				code: "malformed-message",
				message: "Invalid runs message: cards[0].stages[0].parentIds[0] must not be empty.",
			},
		});
	});
});

describe("nesting", () => {
	/** A tool-result part whose result nests `depth` arrays (the frame adds 2 levels around it). */
	const toolResult = (depth: number) =>
		`{"type":"part","session":"s1","turn":"t1","part":{"type":"tool-result","toolCallId":"c1",` +
		`"toolName":"run_tests","result":${"[".repeat(depth)}${"]".repeat(depth)}}}`;

	test("a tool-result nested 9,000 deep is malformed-message, never a stack overflow", () => {
		const result = parseClientFrame(toolResult(9000));
		expect(result).toEqual({
			ok: false,
			error: { code: "malformed-message", message: JSON_TOO_DEEP_MESSAGE },
		});
		expect(toWireError((result as { error: ParseError }).error)).toEqual({
			code: "malformed-message",
			close: 1008,
		});
	});

	test("a frame at the limit parses; one level more is refused, in both directions", () => {
		expect(parseClientFrame(toolResult(MAX_JSON_DEPTH - 2)).ok).toBe(true);
		expect(parseClientFrame(toolResult(MAX_JSON_DEPTH - 1))).toEqual({
			ok: false,
			error: { code: "malformed-message", message: JSON_TOO_DEEP_MESSAGE },
		});
		const deep = `{"type":"error","code":"protocol","message":"x","extra":${"[".repeat(9000)}${"]".repeat(9000)}}`;
		expect(parseServerFrame(deep)).toEqual({
			ok: false,
			error: { code: "malformed-message", message: JSON_TOO_DEEP_MESSAGE },
		});
	});
});

describe("feature gating", () => {
	const without = (feature: Feature) => FEATURES.filter((f) => f !== feature);

	for (const [type, feature] of Object.entries(SERVER_TYPE_FEATURES) as [
		keyof typeof serverMessages,
		Feature,
	][]) {
		test(`server ${type} needs ${feature}`, () => {
			const frame = JSON.stringify(serverMessages[type]);
			expect(parseServerFrame(frame, { features: [feature] }).ok).toBe(true);
			expect(parseServerFrame(frame, { features: without(feature) })).toEqual({
				ok: false,
				error: {
					code: "malformed-message",
					message: `The ${type} message needs the ${feature} feature, which this link did not negotiate.`,
				},
			});
			expect(parseServerFrame(frame).ok).toBe(false);
		});
	}

	for (const [type, feature] of Object.entries(CLIENT_TYPE_FEATURES) as [
		keyof typeof clientMessages,
		Feature,
	][]) {
		test(`client ${type} needs ${feature}`, () => {
			const frame = JSON.stringify(clientMessages[type]);
			expect(parseClientFrame(frame, { features: new Set([feature]) }).ok).toBe(true);
			const result = parseClientFrame(frame, { features: without(feature) });
			expect(result.ok || result.error.message).toBe(
				`The ${type} message needs the ${feature} feature, which this link did not negotiate.`,
			);
		});
	}

	test("the gate is checked before the fields, so an un-negotiated message is refused for that", () => {
		const result = parseServerFrame(JSON.stringify({ type: "fork" }));
		expect(result.ok || result.error.message).toContain("session-forks");
	});

	for (const [field, feature] of Object.entries(TURN_FIELD_FEATURES)) {
		test(`turn.${field} needs ${feature}`, () => {
			const base = { type: "turn", session: "s1", turn: "t1", prompt: "Hi", tools: [] };
			const values: Record<string, unknown> = {
				thinkingLevel: { thinkingLevel: "high" },
				attachments: { attachments: [] },
				message: { message: "m1" },
				retry: { message: "m1", retry: true },
			};
			const frame = JSON.stringify({ ...base, ...(values[field] as object) });
			expect(parseServerFrame(frame, { features: [feature] }).ok).toBe(true);
			const result = parseServerFrame(frame, { features: without(feature) });
			expect(result.ok || result.error).toEqual({
				code: "malformed-message",
				message: `Invalid turn message: ${field === "retry" ? "message" : field} needs the ${feature} feature, which this link did not negotiate.`,
			});
		});
	}

	test("turn.model needs no feature (an operator's MODEL sets it)", () => {
		const frame = JSON.stringify({
			type: "turn",
			session: "s",
			turn: "t",
			prompt: "Hi",
			model: "m",
			tools: [],
		});
		expect(parseServerFrame(frame).ok).toBe(true);
	});

	test("delta cards need run-stage-deltas; full cards never do", () => {
		const runs = (cards: unknown[]) =>
			JSON.stringify({ type: "runs", session: "s1", active: [], paused: [], cards });
		expect(parseClientFrame(runs([fullCard])).ok).toBe(true);
		expect(parseClientFrame(runs([fullCard, deltaCard]), { features: ["run-stage-deltas"] }).ok).toBe(true);
		expect(parseClientFrame(runs([fullCard, deltaCard]))).toEqual({
			ok: false,
			error: {
				code: "malformed-message",
				message:
					"Invalid runs message: cards[1].stagesDelta needs the run-stage-deltas feature, which this link did not negotiate.",
			},
		});
	});

	test("with every feature negotiated, every example parses", () => {
		for (const example of Object.values(clientMessages)) {
			expect(parseClientFrame(JSON.stringify(example), { features: ALL_FEATURES }).ok).toBe(true);
		}
		for (const example of Object.values(serverMessages)) {
			expect(parseServerFrame(JSON.stringify(example), { features: ALL_FEATURES }).ok).toBe(true);
		}
	});

	test("without features, every message that needs none parses", () => {
		const gated = new Set<string>([
			...Object.keys(CLIENT_TYPE_FEATURES),
			...Object.keys(SERVER_TYPE_FEATURES),
		]);
		for (const [type, example] of Object.entries(clientMessages)) {
			if (!gated.has(type)) expect(parseClientFrame(JSON.stringify(example)).ok, type).toBe(true);
		}
		const plainTurn = { type: "turn", session: "s1", turn: "t1", prompt: "Hi", tools: [] };
		for (const [type, example] of Object.entries({ ...serverMessages, turn: plainTurn })) {
			if (!gated.has(type)) expect(parseServerFrame(JSON.stringify(example)).ok, type).toBe(true);
		}
	});
});

describe("delta parts, checked by hand", () => {
	const ok = { type: "part", session: "s1", turn: "t1", part: { type: "text-delta", id: "x", delta: "hi" } };
	const variants: unknown[] = [
		ok,
		{ ...ok, part: { ...ok.part, type: "reasoning-delta" } },
		{ ...ok, part: { ...ok.part, delta: "" } },
		{ ...ok, extra: 1 },
		{ ...ok, part: { ...ok.part, extra: 1 } },
		{ ...ok, part: { type: "text-delta", id: "x" } },
		{ ...ok, part: { ...ok.part, delta: 5 } },
		{ ...ok, part: { ...ok.part, id: "" } },
		{ ...ok, part: { ...ok.part, id: "i".repeat(128) } },
		{ ...ok, part: { ...ok.part, id: "i".repeat(129) } },
		// 128 characters of two UTF-16 units each: longer than 128 units, still 128 characters.
		{ ...ok, session: "😀".repeat(128) },
		{ ...ok, session: "😀".repeat(129) },
		{ ...ok, turn: 7 },
		{ ...ok, session: undefined },
		{ ...ok, part: [ok.part] },
		{ ...ok, part: null },
		{ ...ok, part: { ...ok.part, type: "text-start" } },
	];

	test("accept exactly what the schema accepts", () => {
		for (const variant of variants) {
			const text = JSON.stringify(variant);
			const schema = partSchema.safeParse(JSON.parse(text));
			const result = parseClientFrame(text);
			expect(result.ok).toBe(schema.success);
			if (result.ok && schema.success) expect(result.message).toEqual(schema.data);
		}
		expect(JSON.stringify(parseClientFrame(JSON.stringify(ok)))).toBe(
			JSON.stringify({ ok: true, message: ok }),
		);
	});

	test("a key inherited from a polluted prototype is not the message's own", () => {
		const frame =
			'{"type":"part","session":"s1","turn":"t1","part":{"type":"text-delta","id":"x","delta":"a","__proto__":{"b":1}}}';
		const result = parseClientFrame(frame);
		expect(result.ok).toBe(false);
	});
});
