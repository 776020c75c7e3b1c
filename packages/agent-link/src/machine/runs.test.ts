import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { mcpToolInputs } from "../mcp/tools";
import { parseMachineClientFrame, parseMachineServerFrame } from "./parse";
import { RUN_CREDENTIAL_PATTERN } from "./runs";

const offer = {
	id: "run_abcdefghijklmnop",
	kind: "build",
	document: {
		id: "abcdefghijkl",
		url: "https://chopin.example/d/abcdefghijkl",
		title: "Plan",
		repository: "octo/score",
	},
	base: "a".repeat(40),
	brief: "Implement the plan.",
	requestedBy: "ana",
	createdAt: 1,
};

describe("run messages on the control channel", () => {
	test("an offer, a claim, the credential, status, log and control each parse on the side that reads them", () => {
		const token = `chopin_r_${"A".repeat(43)}`;
		for (const message of [
			{ type: "run-offer", run: offer },
			{ type: "run-claimed", run: offer.id, token },
			{ type: "run-refused", run: offer.id, code: "run-taken", message: "Another machine took it." },
			{ type: "run-withdrawn", run: offer.id },
			{ type: "run-control", request: "r1", run: offer.id, action: "resume" },
		])
			expect(parseMachineServerFrame(JSON.stringify(message))).toMatchObject({ ok: true });
		for (const message of [
			{ type: "run-claim", run: offer.id },
			{ type: "run-status", run: offer.id, status: "paused", workspace: { path: "/w", branch: "chopin/x" } },
			{ type: "run-log", run: offer.id, entries: [{ at: 1, kind: "message", text: "hello" }] },
			{ type: "run-control-result", request: "r1", ok: true },
		])
			expect(parseMachineClientFrame(JSON.stringify(message))).toMatchObject({ ok: true });
	});

	test("a short commit, an unknown kind, an empty log batch or a foreign token shape is malformed", () => {
		const bad = [
			{ type: "run-offer", run: { ...offer, base: "abc1234" } },
			{ type: "run-offer", run: { ...offer, kind: "deploy" } },
			{ type: "run-claimed", run: offer.id, token: `chopin_m_${"A".repeat(43)}` },
		];
		for (const message of bad)
			expect(parseMachineServerFrame(JSON.stringify(message))).toMatchObject({
				ok: false,
				error: { code: "malformed-message" },
			});
		expect(
			parseMachineClientFrame(JSON.stringify({ type: "run-log", run: offer.id, entries: [] })),
		).toMatchObject({ ok: false });
		expect(RUN_CREDENTIAL_PATTERN.test(`chopin_r_${"A-_z".repeat(10)}abc`)).toBe(true);
	});

	test("invoke_planner takes agent or system, and a pull request link must be a web address", () => {
		const invoke = z.object(mcpToolInputs.invoke_planner);
		expect(invoke.safeParse({ message: "hi", as: "system" }).success).toBe(true);
		expect(invoke.safeParse({ message: "hi", as: "person" }).success).toBe(false);
		const pr = z.object(mcpToolInputs.report_pull_request);
		expect(pr.safeParse({ url: "https://github.com/octo/score/pull/1" }).success).toBe(true);
		expect(pr.safeParse({ url: "javascript:alert(1)" }).success).toBe(false);
	});
});
