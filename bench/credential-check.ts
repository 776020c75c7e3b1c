/**
 * How long a credential check takes: a machine credential (what every machine HTTP call and
 * control-channel upgrade starts with: MachineAuth.check) and a Planner credential (what the agent
 * endpoint asks of a chopin_p_ bearer: PlannerAccess.verify), against 10,000 machines, on SQLite and
 * (when it answers) PostgreSQL. In process, one check at a time and 100 at once; then over the wire
 * (bench/credential-check-wire.ts): the real server process, 100 concurrent clients in other processes,
 * HTTP and the WebSocket upgrade of /api/v1/agent, beside a baseline measured in the same run.
 * Target: p99 < 1 ms on both stores. Not a test: it prints.
 *
 *   bun bench/credential-check.ts [checks per figure, default 20000] [HTTP requests per client, default 200]
 *     [upgrades per client, default 50]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { createIdentity } from "../apps/server/src/auth/identity";
import { loadConfig } from "../apps/server/src/config";
import { DocumentService } from "../apps/server/src/documents/service";
import { LiveHub } from "../apps/server/src/live/hub";
import { createLogger } from "../apps/server/src/log";
import { MachineAuthorizations } from "../apps/server/src/machines/authorizations";
import { ContactWrites } from "../apps/server/src/machines/contact-writes";
import { CredentialCache } from "../apps/server/src/machines/credential-cache";
import { newMachineCredential, newPlannerCredential } from "../apps/server/src/machines/credentials";
import { MachineAuth } from "../apps/server/src/machines/machine-auth";
import { PlannerAccess } from "../apps/server/src/machines/planner-access";
import { PlannerCredentials } from "../apps/server/src/machines/planner-credentials";
import { Secret } from "../apps/server/src/secret";
import { migrate } from "../apps/server/src/store/migrate";
import { openStore } from "../apps/server/src/store/store";
import { systemClock } from "../packages/agent-link/src/clock";
import { overTheWire } from "./credential-check-wire";
import { MACHINES, type Seeded, seed } from "./credential-seed";

const CHECKS = Number(process.argv[2] ?? 20_000);
const HTTP_REQUESTS = Number(process.argv[3] ?? 200);
const WS_REQUESTS = Number(process.argv[4] ?? 50);
const CONCURRENT = 100;
const POSTGRES_URL = process.env.CHOPIN_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const clock = systemClock();
const log = createLogger({ level: "silent" });
const config = loadConfig(
	{
		AUTH_MODE: "local",
		DEMO: "off",
		LOCAL_ACCOUNTS: JSON.stringify({
			users: [{ login: "bench" }],
			repositories: { "bench/repo": { bench: "admin" } },
		}),
		LOCAL_PLANNER_CREDENTIALS: "on",
	},
	{ cwd: tmpdir() },
);

function percentiles(samples: number[]): { p50: number; p99: number; max: number; perSecond: number } {
	const sorted = [...samples].sort((a, b) => a - b);
	const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
	const total = samples.reduce((a, b) => a + b, 0);
	return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1)!, perSecond: (samples.length / total) * 1000 };
}

async function measure(name: string, check: () => Promise<unknown>, checks = CHECKS): Promise<void> {
	for (let i = 0; i < Math.min(1_000, checks); i++) await check();
	const samples: number[] = [];
	for (let i = 0; i < checks; i++) {
		const start = performance.now();
		await check();
		samples.push(performance.now() - start);
	}
	const { p50, p99, max, perSecond } = percentiles(samples);
	console.log(
		`  ${name.padEnd(34)} p50 ${p50.toFixed(3)} ms   p99 ${p99.toFixed(3)} ms   max ${max.toFixed(2)} ms   ${Math.round(perSecond)}/s`,
	);
}

/**
 * Checks of several kinds taken in turn (one of each, then the next of each), each timed on its own: every
 * figure sees the same moments of a shared box, so their p99s can be compared. The first `warmUp` rounds are
 * not counted.
 */
async function measureInTurn(
	kinds: { name: string; check: (i: number) => Promise<unknown> }[],
	rounds: number,
	warmUp: number,
): Promise<void> {
	const samples = kinds.map(() => [] as number[]);
	for (let i = 0; i < rounds; i++) {
		// Each round starts with the next kind, so none always runs right after the same other.
		for (let j = 0; j < kinds.length; j++) {
			const k = (i + j) % kinds.length;
			const start = performance.now();
			await kinds[k]!.check(i);
			if (i >= warmUp) samples[k]!.push(performance.now() - start);
		}
	}
	for (const [k, { name }] of kinds.entries()) {
		const { p50, p99, max, perSecond } = percentiles(samples[k]!);
		console.log(
			`  ${name.padEnd(34)} p50 ${p50.toFixed(3)} ms   p99 ${p99.toFixed(3)} ms   max ${max.toFixed(2)} ms   ${Math.round(perSecond)}/s`,
		);
	}
}

/** `checks` checks, CONCURRENT at a time, each timed from its start to its answer. */
async function measureConcurrent(
	name: string,
	check: () => Promise<unknown>,
	checks = CHECKS,
): Promise<void> {
	const samples: number[] = [];
	let left = checks;
	const start = performance.now();
	await Promise.all(
		Array.from({ length: CONCURRENT }, async () => {
			while (left-- > 0) {
				const began = performance.now();
				await check();
				samples.push(performance.now() - began);
			}
		}),
	);
	const wall = performance.now() - start;
	const { p50, p99, max } = percentiles(samples);
	console.log(
		`  ${name.padEnd(34)} p50 ${p50.toFixed(3)} ms   p99 ${p99.toFixed(3)} ms   max ${max.toFixed(2)} ms   ${Math.round((checks / wall) * 1000)}/s`,
	);
}

async function run(kind: "sqlite" | "postgres", url: string): Promise<Seeded> {
	const store = await openStore({ url });
	try {
		await migrate(store);
		const seeded = await seed(store, clock);
		const { machineTokens, plannerTokens } = seeded;
		const cache = new CredentialCache();
		const identity = createIdentity({
			config,
			clock,
			log,
			fetch,
			secretKey: new Secret(new Uint8Array(32)),
			version: "0.1.0",
		});
		// Each its own, as a fresh process's: a machine credential's first check restores its machine's
		// authorization, which would otherwise spare the Planner credentials' cold pass its share.
		const machineAuthorizations = new MachineAuthorizations({
			store,
			identity,
			clock,
			log,
			onEnded: () => {},
		});
		const authorizations = new MachineAuthorizations({ store, identity, clock, log, onEnded: () => {} });
		const auth = new MachineAuth({
			store,
			clock,
			cache,
			authorizations: machineAuthorizations,
			// Only check() is measured here: nothing is noted (the HTTP half's first contacts are).
			contacts: new ContactWrites({ store, clock, log }),
			versionPolicy: () => ({ minVersion: undefined, serverVersion: "0.1.0", origin: "http://localhost" }),
		});
		const documents = new DocumentService({ store, clock, hub: new LiveHub() });
		const access = new PlannerAccess({
			clock,
			identity,
			documents,
			authorizations,
			credentials: new PlannerCredentials({ store, clock, cache }),
			settings: () => ({ ...config, localPlannerCredentials: true }),
		});
		const pick = (tokens: string[]) => tokens[Math.floor(Math.random() * tokens.length)]!;
		console.log(`${kind} (${MACHINES} machines; ${CHECKS} checks per figure unless it says otherwise):`);
		// A credential's first check asks the store (and keeps a valid answer); later ones may not. So: one
		// cold pass over the machines, each machine's credential and its Planner credential (whose first check
		// also restores the machine's authorization from the row read with it), then random checks. Beside
		// them, in turn, a bare round trip through the same store: what the box gives any query at that moment.
		await measureInTurn(
			[
				{
					name: "machine credential (cold)",
					check: async (i) => {
						const checked = await auth.check(`Bearer ${machineTokens[i]}`);
						if (!checked.ok) throw new Error("a seeded machine credential was refused");
					},
				},
				{
					name: "Planner credential (cold)",
					check: async (i) => {
						if (!(await access.verify(plannerTokens[i]!)))
							throw new Error("a seeded Planner credential was refused");
					},
				},
				{ name: "bare round trip (SELECT 1)", check: () => store.ping() },
			],
			MACHINES,
			1_000,
		);
		await measure("machine credential (valid)", async () => {
			const checked = await auth.check(`Bearer ${pick(machineTokens)}`);
			if (!checked.ok) throw new Error("a seeded machine credential was refused");
		});
		await measure("machine credential (unknown)", async () => {
			const checked = await auth.check(`Bearer ${newMachineCredential()}`);
			if (checked.ok) throw new Error("an unknown machine credential was accepted");
		});
		await measure("Planner credential (valid)", async () => {
			if (!(await access.verify(pick(plannerTokens))))
				throw new Error("a seeded Planner credential was refused");
		});
		await measure("Planner credential (unknown)", async () => {
			if (await access.verify(newPlannerCredential()))
				throw new Error("an unknown Planner credential was accepted");
		});
		console.log(`  in process, ${CONCURRENT} checks at once:`);
		await measureConcurrent("machine credential (valid)", async () => {
			const checked = await auth.check(`Bearer ${pick(machineTokens)}`);
			if (!checked.ok) throw new Error("a seeded machine credential was refused");
		});
		await measureConcurrent("Planner credential (valid)", async () => {
			if (!(await access.verify(pick(plannerTokens))))
				throw new Error("a seeded Planner credential was refused");
		});
		return seeded;
	} finally {
		await store.close();
	}
}

const dir = mkdtempSync(join(tmpdir(), "chopin-bench-"));
try {
	const seeded = await run("sqlite", `sqlite://${join(dir, "chopin.db")}`);
	// The server process opens the same file (DATA_DIR/chopin.db) once the in-process half has closed it.
	await overTheWire({ dataDir: dir, seeded, httpRequests: HTTP_REQUESTS, wsRequests: WS_REQUESTS });
} finally {
	rmSync(dir, { recursive: true, force: true });
}

const admin = new SQL({ url: POSTGRES_URL, max: 1, connectionTimeout: 3 });
let schema: string | undefined;
try {
	await admin`SELECT 1`;
	schema = `chopin_bench_${process.pid}`;
	await admin.unsafe(`CREATE SCHEMA ${schema}`);
	const url = new URL(POSTGRES_URL);
	url.searchParams.set("search_path", schema);
	const seeded = await run("postgres", url.href);
	const dataDir = mkdtempSync(join(tmpdir(), "chopin-bench-"));
	try {
		await overTheWire({
			dataDir,
			databaseUrl: url.href,
			seeded,
			httpRequests: HTTP_REQUESTS,
			wsRequests: WS_REQUESTS,
		});
	} finally {
		rmSync(dataDir, { recursive: true, force: true });
	}
} catch (error) {
	if (!schema) console.log(`postgres: skipped (${(error as Error).message})`);
	else throw error;
} finally {
	if (schema) await admin.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
	await admin.close({ timeout: 1 });
}
