import { expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { createLogger } from "./log";
import { Secret } from "./secret";

function capture(options: Parameters<typeof createLogger>[0] = {}) {
	const lines: string[] = [];
	const log = createLogger({
		clock: new ManualClock(Date.UTC(2026, 0, 1)),
		...options,
		write: (l) => lines.push(l),
	});
	return { log, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

test("each line is one JSON object with level, time, msg and the fields", () => {
	const { log, lines, records } = capture();
	log.info("listening", { port: 3000 });
	expect(lines).toHaveLength(1);
	expect(lines[0]).not.toContain("\n");
	expect(records()[0]).toEqual({
		level: "info",
		time: "2026-01-01T00:00:00.000Z",
		msg: "listening",
		port: 3000,
	});
});

test("lines below the level are dropped; silent drops everything", () => {
	const warn = capture({ level: "warn" });
	warn.log.debug("d");
	warn.log.info("i");
	warn.log.warn("w");
	warn.log.error("e");
	expect(warn.records().map((r) => r.level)).toEqual(["warn", "error"]);
	const silent = capture({ level: "silent" });
	silent.log.error("e");
	expect(silent.lines).toEqual([]);
});

test("tokens are masked anywhere in the line, and so are the given secrets", () => {
	const { log, lines } = capture({ secrets: ["client-secret-value"] });
	const token = `ghp_${"a".repeat(36)}`;
	log.warn(`GitHub refused ${token}`, {
		header: `Bearer ${"x".repeat(30)}`,
		nested: { planner: `chopin_p_${"b".repeat(43)}`, secret: "client-secret-value" },
		wrapped: new Secret("hidden-value"),
	});
	const line = lines[0]!;
	expect(line).not.toContain(token);
	expect(line).not.toContain("x".repeat(30));
	expect(line).not.toContain("b".repeat(43));
	expect(line).not.toContain("client-secret-value");
	expect(line).not.toContain("hidden-value");
	expect(line).toContain("[redacted]");
});

test("errors keep their name, message, code and stack; odd values never throw", () => {
	const { log, records } = capture();
	const error = Object.assign(new Error(`token ghp_${"z".repeat(36)} rejected`), { code: "E_GH" });
	const loop: Record<string, unknown> = { a: 1 };
	loop.self = loop;
	log.error("failed", { error, big: 10n, loop });
	const record = records()[0]!;
	expect(record.error).toMatchObject({ name: "Error", message: "token [redacted] rejected", code: "E_GH" });
	expect(typeof (record.error as { stack: string }).stack).toBe("string");
	expect(record.big).toBe("10");
	expect(record.loop).toEqual({ a: 1, self: "[repeated]" });
});

test("child loggers add their fields to every line", () => {
	const { log, records } = capture();
	log.child({ route: "agent" }).child({ document: "d1" }).info("attached", { login: "octocat" });
	expect(records()[0]).toMatchObject({ route: "agent", document: "d1", login: "octocat", msg: "attached" });
});
