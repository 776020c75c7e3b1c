import { describe, expect, test } from "bun:test";
import {
	CLIENT_MALFORMED_CLOSE,
	CLOSE_CODES,
	CLOSES,
	closeCodeForError,
	closeCodeForRefusal,
	ERROR_CODES,
	REFUSAL_CODES,
	REFUSALS,
	type SubprotocolRequiredBody,
	subprotocolRequiredBody,
	subprotocolRequiredBodySchema,
	UNRESPONSIVE_REASON,
	UPGRADE_REFUSALS,
} from "./closing";

describe("closing", () => {
	test("every refusal code has its close code (spec: Ownership and Closing)", () => {
		expect(Object.fromEntries(REFUSAL_CODES.map((code) => [code, closeCodeForRefusal(code)]))).toEqual({
			"unsupported-version": 4426,
			"repository-forbidden": 4403,
			"sign-in-required": 4401,
			"planner-attached": 4409,
			"document-unavailable": 4404,
			"document-archived": 4404,
			"access-revoked": 4403,
			unavailable: 1011,
		});
	});

	test("only unavailable is retried", () => {
		expect(REFUSAL_CODES.filter((code) => REFUSALS[code].retry)).toEqual(["unavailable"]);
	});

	test("error codes close with 1008 or 1009", () => {
		expect(Object.fromEntries(ERROR_CODES.map((code) => [code, closeCodeForError(code)]))).toEqual({
			"malformed-message": 1008,
			protocol: 1008,
			"message-too-large": 1009,
		});
	});

	test("every close code of the Closing table, and the client's 4400, has a meaning", () => {
		const codes = Object.values(CLOSE_CODES).sort();
		expect(codes).toEqual([1000, 1001, 1008, 1009, 1011, 1012, 4400, 4401, 4403, 4404, 4409, 4426]);
		for (const code of codes) expect(CLOSES[code].meaning.length).toBeGreaterThan(0);
		const refusalCloses = new Set(REFUSAL_CODES.map(closeCodeForRefusal));
		for (const code of refusalCloses) expect(CLOSES[code as keyof typeof CLOSES]).toBeDefined();
		expect(CLIENT_MALFORMED_CLOSE).toEqual({ code: 4400, reason: "malformed-message" });
		expect(UNRESPONSIVE_REASON).toBe("unresponsive");
	});

	test("a Node client may send every code it needs to (1000 or 3000 to 4999)", () => {
		expect(CLIENT_MALFORMED_CLOSE.code).toBeGreaterThanOrEqual(3000);
		expect(CLIENT_MALFORMED_CLOSE.code).toBeLessThanOrEqual(4999);
	});

	test("the upgrade's HTTP statuses, in the order the server checks them", () => {
		expect(UPGRADE_REFUSALS.map((r) => r.status)).toEqual([404, 426, 403, 401, 403, 503, 500]);
		expect(new Set(UPGRADE_REFUSALS.map((r) => r.reason)).size).toBe(UPGRADE_REFUSALS.length);
	});

	test("a 426 body names the subprotocols the server speaks", () => {
		const body: SubprotocolRequiredBody = subprotocolRequiredBody();
		expect(body).toEqual({ code: "subprotocol-required", supported: ["chopin.agent.v1"] });
		expect(subprotocolRequiredBodySchema.safeParse(body).success).toBe(true);
		expect(subprotocolRequiredBodySchema.safeParse({ ...body, extra: 1 }).success).toBe(false);
		expect(
			subprotocolRequiredBodySchema.safeParse({ code: "subprotocol-required", supported: [] }).success,
		).toBe(false);
	});
});
