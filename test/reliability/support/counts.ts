// The counts each reliability file prints at its end (faults injected, failures), one line per file.
import { afterAll } from "bun:test";

export interface Counts {
	/** One more fault injected (a proxy fault, a kill -9). */
	fault(n?: number): void;
	/** Something else worth reporting, by name (e.g. "reattachments"). */
	add(name: string, n?: number): void;
	/** Wraps a test's body so that its failure is counted (and still fails the test). */
	guard(body: () => Promise<void>): () => Promise<void>;
}

/** Registers the hook that prints `reliability/<area>: N faults injected, ..., N failures` after the file. */
export function countsFor(area: string): Counts {
	const extra = new Map<string, number>();
	let faults = 0;
	let failures = 0;
	afterAll(() => {
		const more = [...extra].map(([name, n]) => `, ${n} ${name}`).join("");
		console.log(`reliability/${area}: ${faults} faults injected${more}, ${failures} failures`);
	});
	return {
		fault: (n = 1) => {
			faults += n;
		},
		add: (name, n = 1) => {
			extra.set(name, (extra.get(name) ?? 0) + n);
		},
		guard: (body) => async () => {
			try {
				await body();
			} catch (error) {
				failures += 1;
				throw error;
			}
		},
	};
}
