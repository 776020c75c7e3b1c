/**
 * Writing a message: it is checked by the very parse the other side runs, so neither end can
 * send what the other would refuse (an invalid field, an un-negotiated feature, over 2 MiB).
 */
import type { FeatureSet } from "./features";
import { MAX_FRAME_BYTES } from "./limits";
import { type ParseResult, parseClientFrame, parseServerFrame } from "./parse";
import { CLIENT_MESSAGE_SCHEMAS, type ClientMessage } from "./schemas/client-messages";
import type { ServerMessage } from "./schemas/server-messages";
import { utf8ByteLength } from "./text";

export interface EncodeOptions {
	/** The features attached negotiated; none when omitted. */
	features?: FeatureSet;
}

/** A message this side must not send; code is what the other side would answer. */
export class EncodeError extends Error {
	override readonly name = "EncodeError";
	constructor(
		readonly code: "malformed-message" | "message-too-large",
		message: string,
		readonly hint: string,
	) {
		super(message);
	}
}

/** A message from a client to the server, as the text of one frame. */
export function encodeClientMessage(message: ClientMessage, options?: EncodeOptions): string {
	return encode(message, (text) => parseClientFrame(text, options));
}

/** A message from the server to a client, as the text of one frame. */
export function encodeServerMessage(message: ServerMessage, options?: EncodeOptions): string {
	return encode(message, (text) => parseServerFrame(text, options));
}

/**
 * Either direction, told apart by type; resume, the one type both directions have, is the
 * client's when it lists sessions and the server's Resume Planner otherwise.
 */
export function encodeMessage(message: ClientMessage | ServerMessage, options?: EncodeOptions): string {
	return isClientMessage(message)
		? encodeClientMessage(message, options)
		: encodeServerMessage(message as ServerMessage, options);
}

function isClientMessage(message: ClientMessage | ServerMessage): message is ClientMessage {
	if (message.type === "resume") return "sessions" in message;
	return Object.hasOwn(CLIENT_MESSAGE_SCHEMAS, message.type);
}

function encode(message: unknown, parse: (text: string) => ParseResult<unknown>): string {
	let text: string;
	try {
		text = JSON.stringify(message);
	} catch {
		throw new EncodeError(
			"malformed-message",
			"The message cannot be written as JSON.",
			"Remove cycles, BigInt values and other values JSON cannot hold.",
		);
	}
	if (typeof text !== "string") {
		throw new EncodeError(
			"malformed-message",
			"The message cannot be written as JSON.",
			"Pass a message object.",
		);
	}
	const bytes = utf8ByteLength(text);
	if (bytes > MAX_FRAME_BYTES) {
		throw new EncodeError(
			"message-too-large",
			`The message is ${bytes.toLocaleString("en-US")} bytes of UTF-8, over the ${MAX_FRAME_BYTES.toLocaleString("en-US")}-byte frame limit.`,
			"Send less in one message: split a runs report into several, or make the images in a tool result smaller.",
		);
	}
	const result = parse(text);
	if (!result.ok) {
		throw new EncodeError(
			"malformed-message",
			result.error.message,
			"Fix the field it names; cut a message or error text with cutNote, and send only what attached.features allows.",
		);
	}
	return text;
}
