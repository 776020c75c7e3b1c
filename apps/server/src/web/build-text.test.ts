import { describe, expect, test } from "bun:test";
import type { BuildView } from "./api";
import {
	controlSentence,
	firstLine,
	isFullCommit,
	machineName,
	normaliseCommit,
	pullRequestHref,
	STATUS_WORDS,
	statusSentence,
} from "./build-text";

const build = (over: Partial<BuildView>) =>
	({
		machine: { id: "m", owner: "ana", online: true },
		displayStatus: "running",
		...over,
	}) as BuildView;

describe("the builds panel's words", () => {
	test("every display status has words", () => {
		for (const words of Object.values(STATUS_WORDS)) expect(words.length).toBeGreaterThan(0);
		expect(STATUS_WORDS["needs-decision"]).toBe("needs a decision");
	});

	test("a machine by its label for its owner, else by its owner", () => {
		expect(machineName({ id: "m", owner: "ana", online: true, label: "ana's laptop" })).toBe("ana's laptop");
		expect(machineName({ id: "m", owner: "ana", online: true })).toBe("@ana's machine");
	});

	test("what a machine away means, and what to decide past its grace", () => {
		const offline = statusSentence(
			build({ displayStatus: "machine-offline", offlineUntil: Date.UTC(2026, 0, 1, 12) }),
		);
		expect(offline).toStartWith("@ana's machine is offline. Until ");
		expect(offline).toContain("paused until someone resumes it");
		expect(statusSentence(build({ displayStatus: "needs-decision" }))).toContain("Decide: discard this run");
		expect(statusSentence(build({ displayStatus: "running" }))).toBeUndefined();
	});

	test("where a stop or resume stands", () => {
		const control = (state: NonNullable<BuildView["control"]>["state"], message?: string) =>
			controlSentence({ action: "stop", by: "ben", at: 1, state, ...(message && { message }) });
		expect(control("held")).toBe("@ben asked to stop it: stopping when the machine is back.");
		expect(control("sent")).toBe("@ben asked to stop it: waiting for the machine to confirm.");
		expect(control("confirmed")).toBe("Stopped as @ben asked: the machine confirmed.");
		expect(control("refused", "It already ended.")).toBe(
			"The machine could not stop it, as @ben asked: It already ended.",
		);
		expect(control("unconfirmed")).toBe(
			"Not confirmed: @ben asked to stop it, and the machine has not answered.",
		);
	});

	test("commits: full ids only, typed in any case", () => {
		expect(isFullCommit(normaliseCommit(` ${"A".repeat(40)} `))).toBe(true);
		expect(isFullCommit("b".repeat(64))).toBe(true);
		expect(isFullCommit("abc1234")).toBe(false);
		expect(isFullCommit("main")).toBe(false);
		expect(isFullCommit("g".repeat(40))).toBe(false);
	});

	test("pull requests link over https only", () => {
		expect(pullRequestHref("https://github.com/octo/score/pull/1")).toBe(
			"https://github.com/octo/score/pull/1",
		);
		expect(pullRequestHref("http://github.com/octo/score/pull/1")).toBeNull();
		expect(pullRequestHref("javascript:alert(1)")).toBeNull();
		expect(pullRequestHref("not a url")).toBeNull();
	});

	test("a heading from the brief's first line", () => {
		expect(firstLine("  Fix the login\nand more")).toBe("Fix the login");
		expect(firstLine("x".repeat(100), 10)).toBe(`${"x".repeat(9)}…`);
	});
});
