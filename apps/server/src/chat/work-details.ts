// What a tool's row in Work details shows of its input and result: masked text, cut to a size Chat keeps,
// the structured error's label, and the images to store, read once from the raw result.
import { cutToCodePoints } from "@chopin/agent-link";
import { maskCredentials } from "./masking";
import {
	type ResultState,
	readToolError,
	readToolImages,
	type ToolImagesRead,
	toolErrorLabel,
	workDetailsText,
} from "./tool-results";

/** The most characters a row keeps of a tool's input or result text; the rest is left out, and said so. */
export const MAX_TOOL_TEXT_CHARS = 20_000;

/** The label of a failed call that carried no structured error. */
export const PLAIN_FAILURE_LABEL = "Failed";

/** Text cut to max code points, with a note of how many were left out. */
export function cutText(text: string, max = MAX_TOOL_TEXT_CHARS): string {
	const cut = cutToCodePoints(text, max);
	if (cut.length === text.length) return cut;
	const left = [...text.slice(cut.length)].length;
	return `${cut}\n… (${left} more characters not shown)`;
}

/** A value as text: a string as it is, anything else as its JSON. */
function asText(value: unknown): string {
	if (typeof value === "string") return value;
	try {
		return JSON.stringify(value) ?? String(value);
	} catch {
		return String(value);
	}
}

/** A tool's input (a JSON string on the wire, or a value) as Work details shows it: masked and cut. */
export function shownToolInput(input: unknown): string {
	return cutText(maskCredentials(asText(input)));
}

export interface ShownToolResult {
	status: "running" | "done" | "failed";
	result?: string;
	error?: { label: string; message: string };
	imageCount: number;
	/** A final successful result's images, to store on the turn's message. */
	images?: ToolImagesRead;
}

/**
 * Reads a tool result for its row: a preliminary one keeps the call running; a failed final one
 * shows its structured error (kind, else code, and the masked message) or its masked text (at most
 * 4000 characters) under "Failed"; a content result shows its text blocks and image count, and a successful final one
 * carries its images to store. Everything shown is masked.
 */
export function shownToolResult(result: unknown, state: ResultState): ShownToolResult {
	const status = state.preliminary ? "running" : state.isError ? "failed" : "done";
	const structured = readToolError(result, state);
	if (structured) {
		return {
			status,
			error: { label: toolErrorLabel(structured), message: structured.message },
			imageCount: 0,
		};
	}
	const read = readToolImages(result, state);
	const text = read ? workDetailsText(read) : maskCredentials(asText(result));
	const imageCount = read?.imageCount ?? 0;
	if (status === "failed") {
		return { status, error: { label: PLAIN_FAILURE_LABEL, message: cutText(text, 4000) }, imageCount };
	}
	const shown: ShownToolResult = { status, result: cutText(text), imageCount };
	if (read && status === "done" && (read.images.length || read.refused.length)) shown.images = read;
	return shown;
}
