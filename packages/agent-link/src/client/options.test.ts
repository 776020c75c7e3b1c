/** The endpoint URL, the features the client asks for, and the options check. */
import { describe, expect, test } from "bun:test";
import { LinkError } from "./errors";
import { type ConnectOptions, checkOptions, endpointUrl, requestedFeatures } from "./options";

const handlers = { start() {}, turn() {}, stop: () => ({ ok: true }), resume: () => ({ ok: true }) };
const base: ConnectOptions = { url: "https://chopin.example", token: "t", document: "d", handlers };

describe("endpointUrl", () => {
	test("https becomes wss on the origin's /api/v1/agent, whatever path the URL had", () => {
		expect(endpointUrl("https://chopin.example")).toBe("wss://chopin.example/api/v1/agent");
		expect(endpointUrl("https://chopin.example:8443/octo-org/score/plan")).toBe(
			"wss://chopin.example:8443/api/v1/agent",
		);
	});

	test("plain http only for loopback, unless allowed", () => {
		expect(endpointUrl("http://127.0.0.1:3000")).toBe("ws://127.0.0.1:3000/api/v1/agent");
		expect(endpointUrl("http://localhost:3000")).toBe("ws://localhost:3000/api/v1/agent");
		expect(endpointUrl("http://[::1]:3000")).toBe("ws://[::1]:3000/api/v1/agent");
		expect(() => endpointUrl("http://chopin.example")).toThrow(
			expect.objectContaining({ code: "insecure-url" }),
		);
		expect(endpointUrl("http://chopin.internal", true)).toBe("ws://chopin.internal/api/v1/agent");
	});

	test("anything else is refused", () => {
		expect(() => endpointUrl("chopin.example")).toThrow(LinkError);
		expect(() => endpointUrl("ftp://chopin.example")).toThrow(
			expect.objectContaining({ code: "invalid-options" }),
		);
	});
});

describe("requestedFeatures", () => {
	test("by default: deltas, resuming and the restart notice", () => {
		expect(requestedFeatures(base)).toEqual(["run-stage-deltas", "resumable-sessions", "restart-notice"]);
	});

	test("resumable: false drops resuming and the restart notice; handlers add what they serve; extras once", () => {
		const fork = () => {};
		const steer = () => ({ ok: true });
		expect(
			requestedFeatures({
				...base,
				resumable: false,
				handlers: { ...handlers, fork, steer },
				features: ["attachments", "run-stage-deltas"],
			}),
		).toEqual(["run-stage-deltas", "session-forks", "steer-turn", "attachments"]);
	});
});

describe("checkOptions", () => {
	test("names the first bad option, never its value", () => {
		const secret = "chopin_p_secret-secret-secret";
		const error = (() => {
			try {
				checkOptions({ ...base, token: secret, document: "" });
			} catch (caught) {
				return caught as LinkError;
			}
		})();
		expect(error?.code).toBe("invalid-options");
		expect(error?.message).toBe("The document option is not valid.");
		expect(JSON.stringify(error)).not.toContain(secret);
	});

	test("the four handlers a backend must have", () => {
		expect(() => checkOptions({ ...base, handlers: { ...handlers, stop: undefined } as never })).toThrow(
			"The handlers.stop option must be a function.",
		);
	});
});
