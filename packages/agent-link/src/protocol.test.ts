import { describe, expect, test } from "bun:test";
import { MAX_FRAME_BYTES } from "./limits";
import { offersSubprotocol, PLANNER_CREDENTIAL_PATTERN, PROTOCOL_VERSION, SUBPROTOCOL } from "./protocol";

describe("protocol", () => {
	test("subprotocol, version and frame limit", () => {
		expect(SUBPROTOCOL).toBe("chopin.agent.v1");
		expect(PROTOCOL_VERSION).toBe(1);
		expect(MAX_FRAME_BYTES).toBe(2 * 1024 * 1024);
	});

	test("a request may offer other subprotocols beside chopin.agent.v1", () => {
		expect(offersSubprotocol("chopin.agent.v1")).toBe(true);
		expect(offersSubprotocol("chopin.agent.v2, chopin.agent.v1")).toBe(true);
		expect(offersSubprotocol("chopin.agent.v2")).toBe(false);
		expect(offersSubprotocol("chopin.agent.v10")).toBe(false);
		expect(offersSubprotocol(null)).toBe(false);
	});

	test("a Planner credential is chopin_p_ and 43 base64url characters", () => {
		expect(PLANNER_CREDENTIAL_PATTERN.test(`chopin_p_${"A-_z".repeat(10)}abc`)).toBe(true);
		expect(PLANNER_CREDENTIAL_PATTERN.test(`chopin_p_${"A".repeat(42)}`)).toBe(false);
		expect(PLANNER_CREDENTIAL_PATTERN.test(`chopin_m_${"A".repeat(43)}`)).toBe(false);
	});
});
