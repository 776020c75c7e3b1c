/** Reading and writing control-channel frames, the same way on both ends. */
import type { z } from "zod";
import { describeIssues } from "../issues";
import { exceedsJsonDepth, JSON_TOO_DEEP_MESSAGE } from "../json-depth";
import { utf8ByteLength } from "../text";
import { MACHINE_MAX_FRAME_BYTES } from "./protocol";
import {
	type MachineClientMessage,
	type MachineServerMessage,
	machineClientMessageSchema,
	machineServerMessageSchema,
} from "./schemas";

export type MachineParseResult<M> =
	| { ok: true; message: M }
	| { ok: false; error: { code: "malformed-message" | "message-too-large"; message: string } };

function parse<M>(data: unknown, schema: z.ZodType<M>, side: string): MachineParseResult<M> {
	if (typeof data !== "string") {
		return { ok: false, error: { code: "malformed-message", message: "Binary frames are not accepted." } };
	}
	if (utf8ByteLength(data, MACHINE_MAX_FRAME_BYTES) > MACHINE_MAX_FRAME_BYTES) {
		return {
			ok: false,
			error: {
				code: "message-too-large",
				message: `A frame may hold at most ${MACHINE_MAX_FRAME_BYTES} bytes.`,
			},
		};
	}
	if (exceedsJsonDepth(data)) {
		return { ok: false, error: { code: "malformed-message", message: JSON_TOO_DEEP_MESSAGE } };
	}
	let json: unknown;
	try {
		json = JSON.parse(data);
	} catch {
		return { ok: false, error: { code: "malformed-message", message: "The frame is not JSON." } };
	}
	const result = schema.safeParse(json);
	if (result.success) return { ok: true, message: result.data };
	return {
		ok: false,
		error: {
			code: "malformed-message",
			message: describeIssues(`${side} message`, result.error.issues, json),
		},
	};
}

/** What the server reads. */
export function parseMachineClientFrame(data: unknown): MachineParseResult<MachineClientMessage> {
	return parse(data, machineClientMessageSchema, "machine");
}

/** What the CLI reads. */
export function parseMachineServerFrame(data: unknown): MachineParseResult<MachineServerMessage> {
	return parse(data, machineServerMessageSchema, "server");
}

/** Validates before sending, so neither side can send what the other would refuse. */
export function encodeMachineClientMessage(message: MachineClientMessage): string {
	return JSON.stringify(machineClientMessageSchema.parse(message));
}

export function encodeMachineServerMessage(message: MachineServerMessage): string {
	return JSON.stringify(machineServerMessageSchema.parse(message));
}
