// Running hostile-input cases: fast-check's property over one arbitrary with the suite's seed, a tally of what the
// server did with them, and the checks every such file makes once they are through (memory, the server's log).
import { expect } from "bun:test";
import fc from "fast-check";
import { heapMiB, settledHeap } from "./memory";
import { searchSources } from "./secrets-sweep";

/** One seed for every file, so a counterexample reproduces (RELIABILITY_SEED to try others). */
export const SEED = Number(process.env.RELIABILITY_SEED ?? 16);

export interface Tally {
	tried: number;
	accepted: number;
	/** Answered with a documented error or refusal. */
	refused: number;
	failures: number;
	/** The heap's growth over the cases, after a full collection (MiB). */
	heapMiB: number;
}

export const newTally = (): Tally => ({ tried: 0, accepted: 0, refused: 0, failures: 0, heapMiB: 0 });

export interface Verdict {
	refused: boolean;
	/** What was wrong with the answer; undefined when it was as documented. */
	problem: string | undefined;
	/** What to print with a problem. */
	detail: () => string;
}

/**
 * Runs the cases; the first problem fails the test with its detail. No shrinking: each case costs a socket
 * or a request, and the seed reproduces the counterexample anyway.
 */
export async function tryCases<T>(
	arbitrary: fc.Arbitrary<T>,
	numRuns: number,
	tally: Tally,
	run: (c: T) => Promise<Verdict>,
): Promise<void> {
	await fc.assert(
		fc.asyncProperty(arbitrary, async (c) => {
			tally.tried++;
			const verdict = await run(c);
			if (verdict.problem) {
				tally.failures++;
				throw new Error(`${verdict.problem}: ${verdict.detail().slice(0, 400)}`);
			}
			if (verdict.refused) tally.refused++;
			else tally.accepted++;
		}),
		{ numRuns, seed: SEED, endOnFailure: true },
	);
}

/** The promise, or a failure naming what did not come within the bound. */
export function within<T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> {
	let timer: Timer | undefined;
	return Promise.race([
		promise,
		new Promise<T>((_, reject) => {
			timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
		}),
	]).finally(() => clearTimeout(timer));
}

/**
 * After the cases: the heap is back within 64 MiB of `base`, and the server's log holds no planted token.
 * Returns the heap's growth in MiB, for the count line.
 */
export async function expectAftermath(
	base: number,
	logs: Record<string, unknown>[],
	planted: string[],
): Promise<number> {
	const grown = heapMiB((await settledHeap()) - base);
	expect(grown).toBeLessThan(64);
	const text = logs.map((line) => JSON.stringify(line)).join("\n");
	expect(searchSources(planted, [{ name: "server log", text }])).toEqual([]);
	return grown;
}
