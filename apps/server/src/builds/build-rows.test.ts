// The builds table on SQLite and PostgreSQL: a duplicate start is a unique violation (key or live key), a claim and
// an end happen once, a discard frees the live key and ends the credential, and the log is numbered and capped.
import { expect, test } from "bun:test";
import { isUniqueViolation } from "../store/errors";
import type { Store } from "../store/store";
import { describeStores } from "../store/testing";
import {
	claimBuild,
	discardBuild,
	endBuild,
	findByLiveKey,
	getBuild,
	hasLive,
	insertBuild,
	liveForMachine,
	type NewBuild,
} from "./build-rows";
import { appendLog, LOG_LINES_KEPT, readLog } from "./log-lines";

const NOW = 1_767_225_600_000;

async function seed(store: Store): Promise<void> {
	await store.sql`INSERT INTO users ${store.sql({ login: "ana", created_at: NOW })}`;
	await store.sql`INSERT INTO repositories ${store.sql({ full_name: "octo/score", owner: "octo", name: "score", created_at: NOW })}`;
	await store.sql`INSERT INTO documents ${store.sql({ id: "doc000000001", repository: "octo/score", title: "Plan", source: "", created_by: "ana", created_at: NOW, updated_at: NOW })}`;
	await store.sql`INSERT INTO machines ${store.sql({
		id: "mch_1",
		owner: "ana",
		label: "laptop",
		client_version: "0.2.0",
		client_os: "linux",
		client_arch: "x64",
		client_install: "npm",
		auto_run: 0,
		credential_digest: "d".repeat(64),
		created_at: NOW,
		last_contact_at: NOW,
	})}`;
}

const run = (id: string, extra: Partial<NewBuild> = {}): NewBuild => ({
	id,
	documentId: "doc000000001",
	kind: "build",
	brief: "Do it.",
	base: "a".repeat(40),
	requestedBy: "ana",
	machineId: "mch_1",
	idempotencyKey: null,
	liveKey: `live-${id}`,
	now: NOW,
	...extra,
});

async function violates(work: Promise<unknown>): Promise<boolean> {
	try {
		await work;
		return false;
	} catch (error) {
		return isUniqueViolation(error);
	}
}

describeStores("builds rows", (t) => {
	test("a second run with the same live key, or the same key in the document, is a unique violation", async () => {
		await seed(t.store);
		await insertBuild(t.store, run("run_a", { idempotencyKey: "k", liveKey: "same" }));
		expect(await violates(insertBuild(t.store, run("run_b", { liveKey: "same" })))).toBe(true);
		expect(await violates(insertBuild(t.store, run("run_c", { idempotencyKey: "k" })))).toBe(true);
		// Several runs without a key are fine.
		await insertBuild(t.store, run("run_d"));
		await insertBuild(t.store, run("run_e"));
		expect((await getBuild(t.store, "run_a"))?.status).toBe("offered");
		expect(await hasLive(t.store, "doc000000001")).toBe(true);
	});

	test("a claim happens once; an end happens once, frees the live key and bounds the credential", async () => {
		await seed(t.store);
		await insertBuild(t.store, run("run_a", { liveKey: "same" }));
		const claims = await Promise.all(
			[1, 2, 3].map((n) => claimBuild(t.store, "run_a", "mch_1", `digest-${n}`, NOW)),
		);
		expect(claims.filter(Boolean)).toHaveLength(1);
		expect(await claimBuild(t.store, "run_a", "mch_other", "x", NOW)).toBe(false);
		expect(await getBuild(t.store, "run_a")).toMatchObject({ status: "preparing", claimedAt: NOW });
		const end = { status: "stopped" as const, credentialUntil: NOW + 900_000, now: NOW + 1 };
		expect(await endBuild(t.store, "run_a", end)).toBe(true);
		expect(await endBuild(t.store, "run_a", { ...end, status: "failed" })).toBe(false);
		expect(await getBuild(t.store, "run_a")).toMatchObject({
			status: "stopped",
			endedAt: NOW + 1,
			credentialUntil: NOW + 900_000,
		});
		expect(await findByLiveKey(t.store, "same")).toBeUndefined();
		// The same start may be made again now.
		await insertBuild(t.store, run("run_b", { liveKey: "same" }));
		expect(await liveForMachine(t.store, "mch_1")).toHaveLength(1);
	});

	test("a discard frees the live key and ends the credential now; an end after it keeps the earlier end", async () => {
		await seed(t.store);
		await insertBuild(t.store, run("run_a", { liveKey: "same" }));
		await claimBuild(t.store, "run_a", "mch_1", "digest", NOW);
		expect(await discardBuild(t.store, "run_a", NOW + 5)).toBe(true);
		expect(await discardBuild(t.store, "run_a", NOW + 6)).toBe(false);
		expect(await findByLiveKey(t.store, "same")).toBeUndefined();
		await endBuild(t.store, "run_a", { status: "stopped", credentialUntil: NOW + 900_000, now: NOW + 7 });
		expect(await getBuild(t.store, "run_a")).toMatchObject({
			discardedAt: NOW + 5,
			credentialUntil: NOW + 5,
		});
		expect(await hasLive(t.store, "doc000000001")).toBe(false);
	});

	test("log lines are numbered per run across batches, and only the newest are kept", async () => {
		await seed(t.store);
		await insertBuild(t.store, run("run_a"));
		const line = (n: number) => ({ at: n, kind: "output" as const, text: `line ${n}` });
		const first = await appendLog(t.store, "run_a", [line(1), line(2)]);
		expect(first.map((l) => l.seq)).toEqual([1, 2]);
		const batch = Array.from({ length: LOG_LINES_KEPT }, (_, i) => line(i + 3));
		await appendLog(t.store, "run_a", batch);
		expect((await getBuild(t.store, "run_a"))?.logSeq).toBe(LOG_LINES_KEPT + 2);
		const page = await readLog(t.store, "run_a", { limit: 3 });
		expect(page.lines.map((l) => l.seq)).toEqual([3, 4, 5]);
		expect(page.more).toBe(true);
		expect(await appendLog(t.store, "run_missing", [line(1)])).toEqual([]);
	});
});
