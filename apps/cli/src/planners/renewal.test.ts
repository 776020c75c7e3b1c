import { describe, expect, test } from "bun:test";
import { reconnectBackoff } from "@chopin/agent-link/backoff";
import { ManualClock } from "@chopin/agent-link/clock";
import { CliError } from "../program/errors";
import { finalRefusalError, refusalError, unreachable } from "../server-link/server-errors";
import { createTestContext } from "../testing/context";
import { Renewals, verdictOf } from "./renewal";

const facts = { server: "http://127.0.0.1:1", version: "0.1.0", upgrade: {} as never };

describe("verdictOf", () => {
	test("final refusals are the machine's, other 4xx the document's, the rest retried", () => {
		expect(verdictOf(finalRefusalError("machine-revoked", "", facts))).toBe("machine");
		expect(verdictOf(finalRefusalError("machine-reauthorize", "", facts))).toBe("machine");
		const refused = (status: number, code: string) => {
			const error = refusalError(status, { code, message: "no" }, facts);
			error.status = status;
			error.serverCode = code;
			return error;
		};
		expect(verdictOf(refused(404, "not-found"))).toBe("document");
		expect(verdictOf(refused(409, "document-archived"))).toBe("document");
		expect(verdictOf(refused(403, "repository-forbidden"))).toBe("document");
		expect(verdictOf(refused(429, "rate-limited"))).toBe("retry");
		expect(verdictOf(refused(503, "unavailable"))).toBe("retry");
		expect(verdictOf(unreachable(facts.server, "the connection was refused"))).toBe("retry");
		expect(verdictOf(new Error("boom"))).toBe("retry");
		expect(verdictOf(new CliError("git-failed", "x"))).toBe("retry");
	});
});

describe("Renewals", () => {
	test("renews ahead of expiry, retries on the reconnect schedule while unreachable, then carries on", async () => {
		const ctx = createTestContext();
		try {
			const clock = new ManualClock();
			const start = clock.now();
			const attempts: number[] = [];
			let failures = 2;
			const renewals = new Renewals({
				clock,
				log: ctx.log,
				document: () => "abcdefghijkm",
				onRefused: () => {
					throw new Error("not refused");
				},
				backoff: reconnectBackoff({ jitter: 0 }),
			});
			renewals.schedule("Planner credential", start + 15 * 60_000, 5 * 60_000, async () => {
				attempts.push(clock.now() - start);
				if (failures-- > 0) throw unreachable(facts.server, "the connection was refused");
				return attempts.length < 4 ? clock.now() + 15 * 60_000 : undefined;
			});
			await clock.advance(10 * 60_000 - 1);
			expect(attempts).toEqual([]);
			await clock.advance(1);
			expect(attempts).toEqual([600_000]);
			// 1 s, then 2 s later (the reconnect schedule), then every 10 minutes again.
			await clock.advance(3_000);
			expect(attempts).toEqual([600_000, 601_000, 603_000]);
			await clock.advance(10 * 60_000);
			expect(attempts).toEqual([600_000, 601_000, 603_000, 1_203_000]);
			renewals.cancel();
			expect(clock.pending).toBe(0);
		} finally {
			ctx.cleanup();
		}
	});

	test("a refusal for good is handed to the supervisor and nothing is retried", async () => {
		const ctx = createTestContext();
		try {
			const clock = new ManualClock();
			const refused: string[] = [];
			const renewals = new Renewals({
				clock,
				log: ctx.log,
				document: () => "abcdefghijkm",
				onRefused: (verdict) => refused.push(verdict),
			});
			renewals.schedule("Planner credential", clock.now(), 0, async () => {
				throw finalRefusalError("machine-revoked", "", facts);
			});
			await clock.advance(0);
			expect(refused).toEqual(["machine"]);
			expect(clock.pending).toBe(0);
		} finally {
			ctx.cleanup();
		}
	});
});
