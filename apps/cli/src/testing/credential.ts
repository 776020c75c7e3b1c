// A sample machine credential for tests, with a token to search every output for.
import type { Credential } from "../machine/credential";

export const TOKEN = "chopin_m_Zk3p9QvX2rL8sT1uW5yA7bC0dE4fG6hJ8kM2nP4qR6s";

export function sampleCredential(overrides: Partial<Credential> = {}): Credential {
	return {
		server: "https://chopin.example",
		token: TOKEN,
		machineId: "mch_123",
		createdAt: "2026-01-01T00:00:00.000Z",
		...overrides,
	};
}
