import { describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import type { RunLogEntry } from "@chopin/agent-link/machine";
import { createRedactor } from "@chopin/agent-link/redact";
import { RUN_LOG_HELD_MAX, RunLog } from "./run-log";

function log(options: { up?: () => boolean } = {}) {
	const clock = new ManualClock();
	const sent: RunLogEntry[][] = [];
	const runLog = new RunLog({
		clock,
		redact: createRedactor(["build-secret-value"]),
		send: (entries) => {
			if (options.up && !options.up()) return false;
			sent.push(entries);
			return true;
		},
	});
	const lines = () => sent.flat().map((e) => `${e.kind}: ${e.text}`);
	return { clock, runLog, sent, lines };
}

const chunk = (text: string) => ({
	sessionUpdate: "agent_message_chunk" as const,
	content: { type: "text" as const, text },
});

describe("a run's log", () => {
	test("message chunks become whole lines; tools, plans and output are lines of their own, masked", async () => {
		const { clock, runLog, lines, sent } = log();
		runLog.update(chunk("Reading "));
		runLog.update(chunk("the brief.\nThen "));
		runLog.update({
			sessionUpdate: "tool_call",
			toolCallId: "t1",
			title: "Edit a.ts",
			kind: "edit",
			status: "pending",
		});
		runLog.update({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "in_progress" });
		runLog.update({
			sessionUpdate: "tool_call_update",
			toolCallId: "t1",
			title: "Edit a.ts",
			status: "completed",
		});
		runLog.update({
			sessionUpdate: "plan",
			entries: [
				{ content: "Read", priority: "high", status: "completed" },
				{ content: "Write", priority: "high", status: "pending" },
			],
		});
		runLog.add("output", "token build-secret-value and ghp_0123456789abcdefghij0123456789abcdef");
		runLog.update({ sessionUpdate: "current_mode_update", currentModeId: "code" });
		expect(sent).toEqual([]);
		await clock.advance(250);
		expect(lines()).toEqual([
			"message: Reading the brief.",
			"message: Then ",
			"tool: Edit a.ts (edit): pending",
			"tool: Edit a.ts: completed",
			"plan: [x] Read\n[ ] Write",
			"output: token [redacted] and [redacted]",
		]);
	});

	test("a half line waits for its newline, then shows once it has waited two seconds", async () => {
		const { clock, runLog, lines } = log();
		runLog.update(chunk("thinking"));
		await clock.advance(250);
		expect(lines()).toEqual([]);
		runLog.update(chunk(" more"));
		await clock.advance(2000);
		expect(lines()).toEqual(["message: thinking more"]);
	});

	test("while the channel is down lines are kept (the newest ones), and sent with a note once it is back", async () => {
		let up = false;
		const { clock, runLog, lines } = log({ up: () => up });
		for (let i = 0; i < RUN_LOG_HELD_MAX + 5; i++) runLog.add("output", `line ${i}`);
		await clock.advance(1000);
		expect(lines()).toEqual([]);
		up = true;
		runLog.flush();
		const all = lines();
		expect(all[0]).toBe("note: 5 earlier log lines were left out while Chopin could not be reached.");
		expect(all[1]).toBe("output: line 5");
		expect(all.length).toBe(RUN_LOG_HELD_MAX + 1);
	});
});
