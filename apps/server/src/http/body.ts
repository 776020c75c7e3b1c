// Request bodies: a size limit enforced while reading, a content-type check, a nesting limit, and zod validation.
import { JSON_TOO_DEEP_MESSAGE, parseJsonWithin } from "@chopin/agent-link/json-depth";
import type { z } from "zod";
import { HttpError } from "./errors";

export interface BodyLimit {
	/** The most bytes read before refusing with 413 body-too-large (MAX_BODY_BYTES). */
	maxBytes: number;
}

/** Reads the raw body, refusing with 413 as soon as it is known to exceed maxBytes. */
export async function readBytes(req: Request, { maxBytes }: BodyLimit): Promise<Uint8Array> {
	const declared = Number(req.headers.get("content-length") ?? Number.NaN);
	if (declared > maxBytes) throw tooLarge(maxBytes);
	if (!req.body) return new Uint8Array(0);
	// Count while reading: a chunked body has no Content-Length, and a declared one can lie.
	const reader = req.body.getReader();
	const chunks: Uint8Array[] = [];
	let total = 0;
	for (;;) {
		const { done, value } = await reader.read();
		if (done) break;
		total += value.byteLength;
		if (total > maxBytes) {
			await reader.cancel().catch(() => {});
			throw tooLarge(maxBytes);
		}
		chunks.push(value);
	}
	const out = new Uint8Array(total);
	let at = 0;
	for (const chunk of chunks) {
		out.set(chunk, at);
		at += chunk.byteLength;
	}
	return out;
}

/** True for application/json and any application/<x>+json, with or without parameters. */
export function isJsonContentType(value: string | null): boolean {
	const type = value?.split(";")[0]?.trim().toLowerCase() ?? "";
	return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/**
 * Reads a JSON body and validates it: 415 unsupported-media-type, 413 body-too-large,
 * 400 invalid-json, 400 json-too-deep (over MAX_JSON_DEPTH, refused before parsing: a schema
 * walking such a value would overflow the stack), or 400 invalid-request naming the first bad field.
 */
export async function readJson<S extends z.ZodType>(
	req: Request,
	schema: S,
	limit: BodyLimit,
): Promise<z.output<S>> {
	if (!isJsonContentType(req.headers.get("content-type"))) {
		throw new HttpError(
			415,
			"unsupported-media-type",
			"The request body must be JSON.",
			"Send Content-Type: application/json.",
		);
	}
	const value = parseJsonBody(await readBytes(req, limit));
	const result = schema.safeParse(value);
	if (result.success) return result.data;
	const issue = result.error.issues[0]!;
	const path = [...issue.path];
	// An unknown key is reported on its parent; name the key itself.
	if (issue.code === "unrecognized_keys" && issue.keys[0] !== undefined) path.push(issue.keys[0]);
	const field = fieldName(path);
	const detail = issue.message.replace(/^Invalid input: /, "");
	throw new HttpError(
		400,
		"invalid-request",
		field ? `The field "${field}" is invalid: ${detail}.` : `The request body is invalid: ${detail}.`,
		undefined,
		field ? { field } : undefined,
	);
}

/** UTF-8 JSON within MAX_JSON_DEPTH, or 400 invalid-json or json-too-deep. */
export function parseJsonBody(bytes: Uint8Array): unknown {
	let text: string;
	try {
		text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
	} catch {
		throw invalidJson();
	}
	const read = parseJsonWithin(text);
	if (read.ok) return read.value;
	if (read.reason === "invalid") throw invalidJson();
	throw jsonTooDeep();
}

/** 400 json-too-deep: a body nesting arrays and objects deeper than MAX_JSON_DEPTH. */
export function jsonTooDeep(): HttpError {
	return new HttpError(400, "json-too-deep", JSON_TOO_DEEP_MESSAGE, "Send the data with less nesting.");
}

function invalidJson(): HttpError {
	return new HttpError(400, "invalid-json", "The request body is not valid JSON.");
}

/** `items[0].name` from ["items", 0, "name"]. */
export function fieldName(path: readonly PropertyKey[]): string {
	return path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i ? "." : ""}${String(p)}`)).join("");
}

function tooLarge(maxBytes: number): HttpError {
	return new HttpError(413, "body-too-large", `The request body is larger than the ${maxBytes}-byte limit.`);
}
