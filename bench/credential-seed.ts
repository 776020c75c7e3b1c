/**
 * The rows bench/credential-check.ts checks against: 10,000 paired machines of one account, each with a local
 * authorization and one Planner credential for one of 100 documents (machine i, document i % 100).
 */

import { DocumentService } from "../apps/server/src/documents/service";
import { LiveHub } from "../apps/server/src/live/hub";
import {
	credentialDigest,
	newMachineCredential,
	newPlannerCredential,
} from "../apps/server/src/machines/credentials";
import type { Store } from "../apps/server/src/store/store";
import type { Clock } from "../packages/agent-link/src/clock";

export const MACHINES = 10_000;
export const DOCUMENTS = 100;

export interface Seeded {
	machineTokens: string[];
	plannerTokens: string[];
	/** The Planner credentials of each document, by the document's position. */
	plannerByDocument: string[][];
}

export async function seed(store: Store, clock: Clock): Promise<Seeded> {
	const now = clock.now();
	await store.sql`INSERT INTO users ${store.sql({ login: "bench", created_at: now })}`;
	const documents = new DocumentService({ store, clock, hub: new LiveHub() });
	const documentIds: string[] = [];
	for (let d = 0; d < DOCUMENTS; d++) {
		const document = await documents.create({
			repository: "bench/repo",
			title: `Bench ${d}`,
			createdBy: "bench",
		});
		documentIds.push(document.id);
	}
	const machineTokens: string[] = [];
	const plannerTokens: string[] = [];
	const plannerByDocument: string[][] = documentIds.map(() => []);
	for (let from = 0; from < MACHINES; from += 500) {
		const machines = [];
		const authorizations = [];
		const credentials = [];
		for (let i = from; i < Math.min(MACHINES, from + 500); i++) {
			const token = newMachineCredential();
			const planner = newPlannerCredential();
			machineTokens.push(token);
			plannerTokens.push(planner);
			plannerByDocument[i % DOCUMENTS]!.push(planner);
			const id = `mch_bench${String(i).padStart(8, "0")}`;
			machines.push({
				id,
				owner: "bench",
				label: `machine ${i}`,
				client_version: "0.2.0",
				client_os: "linux",
				client_arch: "x64",
				client_install: "npm",
				auto_run: 0,
				credential_digest: credentialDigest(token),
				created_at: now,
				last_contact_at: now,
			});
			authorizations.push({ machine_id: id, kind: "local", login: "bench", updated_at: now });
			credentials.push({
				digest: credentialDigest(planner),
				machine_id: id,
				document_id: documentIds[i % DOCUMENTS],
				expires_at: now + 3_600_000,
				created_at: now,
			});
		}
		await store.sql`INSERT INTO machines ${store.sql(machines)}`;
		await store.sql`INSERT INTO machine_authorizations ${store.sql(authorizations)}`;
		await store.sql`INSERT INTO planner_credentials ${store.sql(credentials)}`;
	}
	return { machineTokens, plannerTokens, plannerByDocument };
}
