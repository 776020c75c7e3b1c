import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { fieldName, isJsonContentType, readBytes, readJson } from "./body";
import { HttpError } from "./errors";

const schema = z.strictObject({
	title: z.string().max(10),
	items: z.array(z.object({ name: z.string() })).optional(),
});

function request(
	body: BodyInit | null,
	headers: Record<string, string> = { "content-type": "application/json" },
) {
	return new Request("http://chopin.test/api/x", { method: "POST", body, headers });
}

async function refusal(promise: Promise<unknown>): Promise<HttpError> {
	try {
		await promise;
	} catch (error) {
		if (error instanceof HttpError) return error;
		throw error;
	}
	throw new Error("expected an HttpError");
}

/** A body sent in chunks with no Content-Length, as a chunked upload is. */
function streamed(chunks: number, size: number): ReadableStream<Uint8Array> {
	let sent = 0;
	return new ReadableStream({
		pull(controller) {
			if (sent === chunks) return controller.close();
			sent += 1;
			controller.enqueue(new Uint8Array(size).fill(32));
		},
	});
}

describe("readJson", () => {
	test("returns the validated value", async () => {
		expect(await readJson(request('{"title":"Plan"}'), schema, { maxBytes: 100 })).toEqual({ title: "Plan" });
		const typed = request('{"title":"Plan"}', {
			"content-type": "application/merge-patch+json; charset=utf-8",
		});
		expect(await readJson(typed, schema, { maxBytes: 100 })).toEqual({ title: "Plan" });
	});

	test("415 for a body that is not declared JSON", async () => {
		for (const type of ["text/plain", "multipart/form-data", "application/jsonx"]) {
			const error = await refusal(
				readJson(request("{}", { "content-type": type }), schema, { maxBytes: 100 }),
			);
			expect([error.status, error.code]).toEqual([415, "unsupported-media-type"]);
		}
		const none = await refusal(readJson(request("{}", {}), schema, { maxBytes: 100 }));
		expect(none.status).toBe(415);
	});

	test("413 for a body over the limit, by Content-Length or while streaming", async () => {
		const declared = await refusal(readJson(request("x".repeat(101)), schema, { maxBytes: 100 }));
		expect([declared.status, declared.code]).toEqual([413, "body-too-large"]);
		const chunked = request(streamed(10, 20));
		expect(chunked.headers.get("content-length")).toBeNull();
		const streamedError = await refusal(readJson(chunked, schema, { maxBytes: 100 }));
		expect([streamedError.status, streamedError.code]).toEqual([413, "body-too-large"]);
	});

	test("400 invalid-json for bytes that are not JSON (or not UTF-8)", async () => {
		for (const body of ["{", "", "nul", new Uint8Array([0x7b, 0xff, 0x7d])]) {
			const error = await refusal(readJson(request(body), schema, { maxBytes: 100 }));
			expect([error.status, error.code]).toEqual([400, "invalid-json"]);
		}
	});

	test("400 invalid-request naming the first bad field", async () => {
		const cases: [string, string][] = [
			['{"title":5}', "title"],
			['{"title":"this is far too long"}', "title"],
			['{"title":"x","items":[{"name":"a"},{}]}', "items[1].name"],
			['{"title":"x","extra":true}', "extra"],
		];
		for (const [body, field] of cases) {
			const error = await refusal(readJson(request(body), schema, { maxBytes: 1000 }));
			expect([error.status, error.code]).toEqual([400, "invalid-request"]);
			expect(error.details).toEqual({ field });
			expect(error.message).toContain(`"${field}"`);
			expect(await error.toResponse().json()).toMatchObject({ code: "invalid-request", field });
		}
		const root = await refusal(readJson(request("[1]"), schema, { maxBytes: 100 }));
		expect(root.message).toStartWith("The request body is invalid");
	});
});

describe("readBytes", () => {
	test("reads a body within the limit exactly", async () => {
		const bytes = await readBytes(request(streamed(3, 10)), { maxBytes: 30 });
		expect(bytes.length).toBe(30);
		expect((await readBytes(request(null), { maxBytes: 1 })).length).toBe(0);
	});
});

test("helpers", () => {
	expect(isJsonContentType("Application/JSON; charset=utf-8")).toBe(true);
	expect(isJsonContentType(null)).toBe(false);
	expect(fieldName(["a", 0, "b"])).toBe("a[0].b");
});
