/**
 * The one way in for a frame, per direction: parseClientFrame (what the server reads) and
 * parseServerFrame (what a client reads). Size, nesting depth, JSON, type, features, then the type's schema.
 */
import type { z } from "zod";
import { type Feature, type FeatureSet, toFeatureSet } from "./features";
import {
	CLIENT_TYPE_FEATURES,
	type GatedField,
	gatedClientField,
	gatedServerField,
	SERVER_TYPE_FEATURES,
} from "./gating";
import { describeIssues, formatPath, quote } from "./issues";
import { exceedsJsonDepth, JSON_TOO_DEEP_MESSAGE } from "./json-depth";
import { ID_MAX, MAX_FRAME_BYTES } from "./limits";
import { CLIENT_MESSAGE_SCHEMAS, type ClientMessage } from "./schemas/client-messages";
import { SERVER_MESSAGE_SCHEMAS, type ServerMessage } from "./schemas/server-messages";
import { utf8ByteLength } from "./text";

/**
 * Why a frame was refused. binary-frame is this package's own code for a binary frame: on the
 * wire the server answers it as malformed-message (error, then close 1008); see toWireError.
 */
export const PARSE_ERROR_CODES = ["malformed-message", "message-too-large", "binary-frame"] as const;
export type ParseErrorCode = (typeof PARSE_ERROR_CODES)[number];

export interface ParseError {
	code: ParseErrorCode;
	/** One sentence naming the field path; it never repeats the payload. */
	message: string;
}

export type ParseResult<M> = { ok: true; message: M } | { ok: false; error: ParseError };

/** A frame as a WebSocket API hands it over: text as a string, binary as bytes. */
export type FrameData = string | ArrayBuffer | ArrayBufferView;

export interface ParseOptions {
	/** The features attached negotiated; none before attached, and none when omitted. */
	features?: FeatureSet;
	/**
	 * Whether bytes came from a binary frame. Omitted, bytes are binary. The ws package hands
	 * text frames over as a Buffer with isBinary false: pass that here and the bytes are read
	 * as the UTF-8 text they are.
	 */
	isBinary?: boolean;
}

/** Reads a frame the client sent (the server's side). */
export function parseClientFrame(data: FrameData, options?: ParseOptions): ParseResult<ClientMessage> {
	return parseFrame(data, options, CLIENT, "client");
}

/** Reads a frame the server sent (a client's side). */
export function parseServerFrame(data: FrameData, options?: ParseOptions): ParseResult<ServerMessage> {
	return parseFrame(data, options, SERVER, "server");
}

interface Direction<M> {
	schemas: Readonly<Record<string, z.ZodType>>;
	typeFeatures: Readonly<Record<string, Feature | undefined>>;
	gatedField: (message: M, features: ReadonlySet<Feature>) => GatedField | null;
}

const CLIENT: Direction<ClientMessage> = {
	schemas: CLIENT_MESSAGE_SCHEMAS,
	typeFeatures: CLIENT_TYPE_FEATURES,
	gatedField: gatedClientField,
};
const SERVER: Direction<ServerMessage> = {
	schemas: SERVER_MESSAGE_SCHEMAS,
	typeFeatures: SERVER_TYPE_FEATURES,
	gatedField: gatedServerField,
};

function refuse(code: ParseErrorCode, message: string): { ok: false; error: ParseError } {
	return { ok: false, error: { code, message } };
}

const decoder = new TextDecoder("utf-8", { fatal: true });

function parseFrame<M>(
	data: FrameData,
	options: ParseOptions | undefined,
	direction: Direction<M>,
	sender: "client" | "server",
): ParseResult<M> {
	let text: string;
	if (typeof data === "string") {
		// Counting stops just past the limit, so a huge frame costs no more than a full one.
		// No UTF-16 unit takes more than 3 bytes: most frames need no count at all.
		if (data.length * 3 > MAX_FRAME_BYTES && utf8ByteLength(data, MAX_FRAME_BYTES) > MAX_FRAME_BYTES) {
			return tooLarge();
		}
		text = data;
	} else {
		const size = data.byteLength;
		// The limit holds for any frame, so an oversized one is refused for its size first.
		if (size > MAX_FRAME_BYTES) return tooLarge(size);
		if (options?.isBinary !== false) {
			return refuse(
				"binary-frame",
				"Binary frames are refused: send each message as JSON in one text frame.",
			);
		}
		try {
			text = decoder.decode(data);
		} catch {
			return refuse("malformed-message", "The frame is not valid UTF-8 text.");
		}
	}

	// A value nested thousands deep would overflow the stack in the schema parse: such a frame is refused
	// for its depth before any schema sees it, whether or not JSON.parse took it. The scan comes after
	// JSON.parse so that a model's deltas, which are shallow, skip it (below).
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		if (exceedsJsonDepth(text)) return refuse("malformed-message", JSON_TOO_DEEP_MESSAGE);
		return refuse("malformed-message", "The frame is not valid JSON.");
	}
	const plainDelta = sender === "client" && isPlainDeltaPartFrame(value);
	if (!plainDelta && exceedsJsonDepth(text)) return refuse("malformed-message", JSON_TOO_DEEP_MESSAGE);
	if (typeof value !== "object" || value === null || Array.isArray(value)) {
		return refuse("malformed-message", "A message must be a JSON object.");
	}
	const type = (value as { type?: unknown }).type;
	if (typeof type !== "string") return refuse("malformed-message", "A message must have a string type.");
	const schema = Object.hasOwn(direction.schemas, type) ? direction.schemas[type] : undefined;
	if (!schema) return refuse("malformed-message", `Unknown ${sender} message type ${quote(type)}.`);

	const features = toFeatureSet(options?.features);
	const typeFeature = direction.typeFeatures[type];
	if (typeFeature && !features.has(typeFeature)) {
		return refuse(
			"malformed-message",
			`The ${type} message needs the ${typeFeature} feature, which this link did not negotiate.`,
		);
	}

	// Most frames of a link are a model's deltas: those are checked by hand, the same rules without the
	// schema's cost. Anything else, or anything they would refuse, goes to the schema, which words it.
	if (plainDelta) return { ok: true, message: value as M };
	const parsed = schema.safeParse(value);
	if (!parsed.success)
		return refuse("malformed-message", describeIssues(`${type} message`, parsed.error.issues, value));
	const message = parsed.data as M;
	const gated = direction.gatedField(message, features);
	if (gated) {
		return refuse(
			"malformed-message",
			`Invalid ${type} message: ${formatPath(gated.path)} needs the ${gated.feature} feature, which this link did not negotiate.`,
		);
	}
	return { ok: true, message };
}

/**
 * Whether a part message is exactly what partSchema accepts for a text-delta or reasoning-delta: type,
 * session, turn and part and no other key; the part with type, id and delta and no other key; each id
 * 1 to 128 characters (counted in UTF-16 units here, never fewer than code points, so a longer id is
 * left to the schema's count). Such a message gates no field on a feature.
 */
function isPlainDeltaPartFrame(value: unknown): boolean {
	if (typeof value !== "object" || value === null) return false;
	const message = value as Record<string, unknown>;
	return message.type === "part" && isPlainDeltaPart(message);
}

function isPlainDeltaPart(message: Record<string, unknown>): boolean {
	if (!hasExactly(message, 4) || !isShortId(message.session) || !isShortId(message.turn)) return false;
	const part = message.part;
	if (typeof part !== "object" || part === null || Array.isArray(part)) return false;
	const fields = part as Record<string, unknown>;
	return (
		(fields.type === "text-delta" || fields.type === "reasoning-delta") &&
		hasExactly(fields, 3) &&
		isShortId(fields.id) &&
		typeof fields.delta === "string"
	);
}

/** The object has exactly these own keys (Object.keys: cheaper than a for-in over a parsed object). */
function hasExactly(value: Record<string, unknown>, size: 3 | 4): boolean {
	const keys = Object.keys(value);
	if (keys.length !== size) return false;
	for (const key of keys) {
		const known =
			key === "type" ||
			(size === 4 ? key === "session" || key === "turn" || key === "part" : key === "id" || key === "delta");
		if (!known) return false;
	}
	return true;
}

function isShortId(value: unknown): boolean {
	return typeof value === "string" && value.length >= 1 && value.length <= ID_MAX;
}

function tooLarge(bytes?: number): { ok: false; error: ParseError } {
	const size = bytes === undefined ? "over" : `${bytes.toLocaleString("en-US")} bytes, over`;
	return refuse(
		"message-too-large",
		`The frame is ${size} the ${MAX_FRAME_BYTES.toLocaleString("en-US")}-byte limit.`,
	);
}

/** What the server sends and closes with for a refused frame (spec: Closing). */
export function toWireError(error: ParseError): {
	code: "malformed-message" | "message-too-large";
	close: 1008 | 1009;
} {
	return error.code === "message-too-large"
		? { code: "message-too-large", close: 1009 }
		: { code: "malformed-message", close: 1008 };
}
