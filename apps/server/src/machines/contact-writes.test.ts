// Machines' last contact from HTTP calls is noted in memory and written in batches (contact-writes.ts): not on
// the request path, within CONTACT_FLUSH_MS on the injected clock, never over a later time, and at stop.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { createLogger } from "../log";
import { runnableKinds } from "../store/testing";
import { cliRequest, LOCAL_ENV, pairedLocally } from "../testing/machines";
import { startTestServer, type TestServer } from "../testing/server";
import { CONTACT_FLUSH_MS, CONTACT_ROWS, ContactWrites } from "./contact-writes";
import { TOUCH_EVERY_MS } from "./machine-auth";

let clock: ManualClock;
const servers: TestServer[] = [];

beforeEach(() => {
	clock = new ManualClock();
});

afterEach(async () => {
	for (const server of servers.splice(0)) await server.close();
});

async function start(kind: "sqlite" | "postgres") {
	const server = await startTestServer({ clock, store: kind, env: LOCAL_ENV });
	servers.push(server);
	return server;
}

async function lastContact(server: TestServer, id: string): Promise<number> {
	const row = await server.context.store.one(
		server.context.store.sql`SELECT last_contact_at FROM machines WHERE id = ${id}`,
	);
	return Number(row?.last_contact_at);
}

for (const kind of runnableKinds()) {
	describe(`machines' last contact [${kind}]`, () => {
		test("an HTTP call is answered before its contact is written; the batch writes it within the flush interval", async () => {
			const server = await start(kind);
			const { target, credential, machineId } = await pairedLocally(server);
			const paired = await lastContact(server, machineId);
			await clock.advance(TOUCH_EVERY_MS);
			const calledAt = clock.now();
			const res = await cliRequest(target, "GET", "/api/connector/machine", { credential });
			expect(res.status).toBe(200);
			expect(await lastContact(server, machineId)).toBe(paired);
			await clock.advance(CONTACT_FLUSH_MS);
			await server.context.machines.contacts.settled();
			expect(await lastContact(server, machineId)).toBe(calledAt);
			// The Machines page reads it from the row.
			const page = await server.context.machines.view(machineId, "ana");
			expect(page?.lastContactAt).toBe(calledAt);
		});

		test("many machines in one flush (more than a statement's rows), a later time never overwritten, the rest at stop", async () => {
			const server = await start(kind);
			const { store } = server.context;
			const t0 = clock.now();
			await store.sql`INSERT INTO users ${store.sql({ login: "ana", created_at: t0 })}`;
			const ids = Array.from(
				{ length: CONTACT_ROWS * 2 + 7 },
				(_, i) => `mch_contact${String(i).padStart(5, "0")}`,
			);
			await store.sql`INSERT INTO machines ${store.sql(
				ids.map((id) => ({
					id,
					owner: "ana",
					label: id,
					client_version: "0.2.0",
					client_os: "linux",
					client_arch: "x64",
					client_install: "npm",
					auto_run: 0,
					created_at: t0,
					last_contact_at: t0,
				})),
			)}`;
			const contacts = new ContactWrites({ store, clock, log: createLogger({ level: "silent" }) });
			ids.forEach((id, i) => {
				contacts.note(id, t0 + 1 + i);
			});
			// An older note for the first machine changes nothing; a machine written meanwhile keeps its later time.
			contacts.note(ids[0]!, t0);
			await store.sql`UPDATE machines SET last_contact_at = ${t0 + 10_000} WHERE id = ${ids[1]!}`;
			await clock.advance(CONTACT_FLUSH_MS - 1);
			expect(await lastContact(server, ids[2]!)).toBe(t0);
			await clock.advance(1);
			await contacts.settled();
			const rows = await store.many(store.sql`SELECT id, last_contact_at FROM machines ORDER BY id`);
			expect(rows.map((r) => Number(r.last_contact_at))).toEqual(
				ids.map((_, i) => (i === 1 ? t0 + 10_000 : t0 + 1 + i)),
			);
			// Noted and not yet due: stop() writes it.
			contacts.note(ids[3]!, t0 + 20_000);
			await contacts.stop();
			expect(await lastContact(server, ids[3]!)).toBe(t0 + 20_000);
		});
	});
}
