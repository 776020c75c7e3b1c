// A sample daemon status (what the control socket answers to `status`) for tests that serve the socket themselves.
import type { DaemonStatus } from "../local/ipc";

export function sampleDaemonStatus(overrides: Partial<DaemonStatus> = {}): DaemonStatus {
	return {
		pid: 4242,
		version: "0.1.0",
		startedAt: "2026-01-01T00:00:00.000Z",
		server: "https://chopin.example",
		logFile: "/state/logs/chopin.log",
		connection: {
			state: "connected",
			since: "2026-01-01T00:00:01.000Z",
			lastContact: "2026-01-01T00:00:02.000Z",
			attempts: 0,
		},
		machine: { id: "mch_123", label: "laptop", owner: "ana", autoRun: false },
		checkouts: [{ path: "/src/score", repository: "octo-org/score", access: "ok" }],
		runs: [],
		planners: [],
		...overrides,
	};
}
