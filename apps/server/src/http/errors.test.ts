import { describe, expect, test } from "bun:test";
import { LOCAL_ENV } from "../testing/machines";
import { startTestServer } from "../testing/server";
import { signInLocally } from "../testing/sign-in";
import { HttpError } from "./errors";

// Shapes only: real-looking, never issued.
const machineToken = `chopin_m_${"Q".repeat(43)}`;
const plannerToken = `chopin_p_${"z".repeat(43)}`;

describe("an error body never echoes a credential", () => {
	test("toResponse masks token shapes in the message and the hint", async () => {
		const error = new HttpError(404, "not-found", `No ${machineToken} here.`, `Not ${plannerToken}.`);
		const body = await error.toResponse().text();
		expect(body).not.toContain(machineToken);
		expect(body).not.toContain(plannerToken);
		expect(JSON.parse(body)).toEqual({
			code: "not-found",
			message: "No [redacted] here.",
			hint: "Not [redacted].",
		});
	});

	test("a token put where a document id goes is not in the document-not-found answer", async () => {
		await using server = await startTestServer({ env: LOCAL_ENV });
		const target = { fetch: (req: Request) => server.fetch(req), publicUrl: server.context.config.publicUrl };
		const { jar } = await signInLocally(target, "ana");
		const res = await fetch(new URL(`/api/documents/${plannerToken}/decisions`, server.url), {
			headers: { cookie: jar.header() },
		});
		expect(res.status).toBe(404);
		const body = await res.text();
		expect(JSON.parse(body)).toMatchObject({ code: "document-not-found" });
		expect(body).not.toContain(plannerToken);
	});
});
