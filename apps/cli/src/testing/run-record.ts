// A valid run.json for tests, with the fields a test cares about overridden.
import type { RunRecord } from "../workspaces/run-record";

export function runRecord(overrides: Partial<RunRecord> = {}): RunRecord {
	const id = overrides.id ?? "run_abcdefghijklmnop";
	return {
		version: 1,
		id,
		kind: "build",
		document: { id: "abcdefghijkm", url: "https://chopin.example/d/abcdefghijkm" },
		repository: "octo/score",
		checkout: "/home/ana/src/score",
		workspace: `/state/runs/${id}/workspace`,
		branch: `chopin/${id}`,
		base: "a".repeat(40),
		status: "running",
		createdAt: 1_000,
		...overrides,
	};
}
