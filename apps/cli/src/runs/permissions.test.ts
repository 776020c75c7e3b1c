import { describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import type { RequestPermissionRequest } from "@agentclientprotocol/sdk";
import { CANCELLED, declined, type PermissionQuestion, TerminalPrompt } from "./permissions";

const request = (
	kinds: ("allow_once" | "allow_always" | "reject_once" | "reject_always")[],
): RequestPermissionRequest => ({
	sessionId: "s1",
	toolCall: { toolCallId: "t1", title: "Write README.md", kind: "edit" },
	options: kinds.map((kind) => ({ optionId: kind, name: kind.replace("_", " "), kind })),
});

const question = (r = request(["allow_once", "reject_once"])): PermissionQuestion => ({
	run: "run_abcdefghijklmnop",
	about: "build for “Plan”",
	request: r,
});

function terminal() {
	const input = new PassThrough();
	let out = "";
	const prompt = new TerminalPrompt({ input, write: (text) => (out += text) });
	return { input, prompt, out: () => out };
}

const until = async (check: () => boolean) => {
	while (!check()) await Bun.sleep(2);
};

describe("permission requests", () => {
	test("without a terminal they are declined with the agent's own reject option, never allowed", () => {
		expect(declined(request(["allow_once", "reject_always", "reject_once"]))).toEqual({
			outcome: { outcome: "selected", optionId: "reject_once" },
		});
		expect(declined(request(["allow_always", "reject_always"]))).toEqual({
			outcome: { outcome: "selected", optionId: "reject_always" },
		});
		expect(declined(request(["allow_once", "allow_always"]))).toEqual(CANCELLED);
	});

	test("on a terminal the person picks by number; anything else is asked again", async () => {
		const { input, prompt, out } = terminal();
		const answer = prompt.ask(question(), new AbortController().signal);
		await until(() => out().includes("Answer 1-2"));
		expect(out()).toContain(
			"run_abcdefghijklmnop (build for “Plan”) asks permission: Write README.md (edit)",
		);
		input.write("7\n");
		await until(() => out().includes("Answer with a number from 1 to 2"));
		input.write("2\n");
		expect(await answer).toBe("reject_once");
		prompt.close();
	});

	test("a withdrawn question says why on the terminal and answers nothing", async () => {
		const { input, prompt, out } = terminal();
		const controller = new AbortController();
		const answer = prompt.ask(question(), controller.signal);
		await until(() => out().includes("Answer 1-2"));
		controller.abort("the connection to Chopin dropped, so the run is paused");
		expect(await answer).toBeUndefined();
		expect(out()).toContain("(withdrawn: the connection to Chopin dropped, so the run is paused)");
		// A line typed while nothing is asked (meant for the withdrawn question) answers nothing later.
		input.write("1\n");
		await Bun.sleep(20);
		const next = prompt.ask(question(request(["reject_once", "allow_once"])), new AbortController().signal);
		await until(() => out().split("Answer 1-2").length === 3);
		await Bun.sleep(20);
		expect(out().endsWith("Answer 1-2: ")).toBe(true);
		input.write("2\n");
		expect(await next).toBe("allow_once");
		prompt.close();
	});

	test("questions from several runs are asked one at a time, in order", async () => {
		const { input, prompt, out } = terminal();
		const first = prompt.ask(question(), new AbortController().signal);
		const second = prompt.ask(question(request(["reject_once", "allow_once"])), new AbortController().signal);
		await until(() => out().includes("Answer 1-2"));
		expect(out().split("asks permission").length).toBe(2);
		input.write("1\n");
		expect(await first).toBe("allow_once");
		await until(() => out().split("asks permission").length === 3);
		input.write("1\n");
		expect(await second).toBe("reject_once");
		prompt.close();
	});
});
