// ServerApi against a real loopback server answering what no Chopin server sends: JSON nested past MAX_JSON_DEPTH is
// not read at all, so neither its code nor its fields reach the CLI.
import { afterEach, describe, expect, test } from "bun:test";
import { CliError } from "../program/errors";
import { createTestContext, type TestContext } from "../testing/context";
import { ServerApi } from "./server-api";

const deep = "[".repeat(9000) + "]".repeat(9000);
let server: ReturnType<typeof Bun.serve> | undefined;
let ctx: TestContext | undefined;
afterEach(() => {
	server?.stop(true);
	ctx?.cleanup();
	server = ctx = undefined;
});

function answering(status: number, body: string): ServerApi {
	server = Bun.serve({
		port: 0,
		hostname: "127.0.0.1",
		fetch: () => new Response(body, { status, headers: { "content-type": "application/json" } }),
	});
	ctx = createTestContext();
	return new ServerApi(ctx, `http://127.0.0.1:${server.port}`);
}

describe("answers nested too deep", () => {
	test("a refusal nested past the limit is not read: its code is not acted on", async () => {
		const api = answering(409, `{"code":"pairing-claimed","message":"Claimed.","extra":${deep}}`);
		const error = (await api.claim("pairing-1", "secret").catch((e: unknown) => e)) as CliError;
		expect(error).toBeInstanceOf(CliError);
		expect(error.serverCode).toBeUndefined();
		expect(error.message).not.toContain("Claimed.");
	});

	test("a success nested past the limit is something chopin does not understand", async () => {
		const api = answering(200, `{"status":"pending","extra":${deep}}`);
		expect(await api.claim("pairing-1", "secret").catch((e: unknown) => e)).toMatchObject({
			code: "server-refused",
		});
	});
});
