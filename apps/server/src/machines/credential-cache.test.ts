// The credential cache: valid answers are kept and served without the store, and every change that could make
// one wrong (revocation, deleted Planner credentials, expiry) is refused at once, on the real server too.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { runnableKinds } from "../store/testing";
import { openAgentSocket } from "../testing/agent-socket";
import { cliRequest, issuePlannerToken, LOCAL_ENV, pageRequest, pairedLocally } from "../testing/machines";
import { startTestServer, type TestServer } from "../testing/server";
import { CredentialCache } from "./credential-cache";
import { credentialDigest } from "./credentials";
import { PLANNER_CREDENTIAL_TTL_MS } from "./planner-credentials";

const digest = (n: number) => credentialDigest(`chopin_m_${String(n).padStart(43, "x")}`);

/** A loader that counts its reads and answers what `rows` holds now. */
function store(rows: Map<string, { machineId: string; documentId?: string; usable: boolean }>) {
	let reads = 0;
	return {
		get reads() {
			return reads;
		},
		load: (key: string) => async () => {
			reads++;
			const row = rows.get(key);
			if (!row) return undefined;
			const { usable, ...scope } = row;
			return { value: { ...row }, scope, keep: usable };
		},
	};
}

describe("CredentialCache", () => {
	test("a valid answer is kept; an unusable or unknown one asks the store every time", async () => {
		const cache = new CredentialCache();
		const rows = new Map([
			[digest(1), { machineId: "m1", usable: true }],
			[digest(2), { machineId: "m2", usable: false }],
		]);
		const s = store(rows);
		for (let i = 0; i < 3; i++) {
			expect(await cache.read(digest(1), s.load(digest(1)))).toEqual({ machineId: "m1", usable: true });
			expect(await cache.read(digest(2), s.load(digest(2)))).toEqual({ machineId: "m2", usable: false });
			expect(await cache.read(digest(3), s.load(digest(3)))).toBeUndefined();
		}
		expect(s.reads).toBe(1 + 3 + 3);
		expect(cache.size).toBe(1);
	});

	test("a change drops what it touches before and after its write, and checks meanwhile ask the store", async () => {
		const cache = new CredentialCache();
		const rows = new Map([
			[digest(1), { machineId: "m1", documentId: "d1", usable: true }],
			[digest(2), { machineId: "m1", documentId: "d2", usable: true }],
			[digest(3), { machineId: "m2", documentId: "d1", usable: true }],
			[digest(4), { machineId: "m2", usable: true }],
		]);
		const s = store(rows);
		for (let n = 1; n <= 4; n++) await cache.read(digest(n), s.load(digest(n)));
		expect(cache.size).toBe(4);

		let release = () => {};
		const writing = cache.change({ machineId: "m1" }, async () => {
			await new Promise<void>((resolve) => {
				release = resolve;
			});
			rows.set(digest(1), { machineId: "m1", documentId: "d1", usable: false });
		});
		// Mid-change: the cached m2 answer is not used either, and what the store says now is not kept.
		const before = s.reads;
		await cache.read(digest(4), s.load(digest(4)));
		expect(s.reads).toBe(before + 1);
		expect(cache.size).toBe(2);
		// A read that began before the write ended keeps nothing, even when it ends after.
		const overlapping = cache.read(digest(1), s.load(digest(1)));
		release();
		await writing;
		expect(await overlapping).toEqual({ machineId: "m1", documentId: "d1", usable: true });
		expect(await cache.read(digest(1), s.load(digest(1)))).toEqual({
			machineId: "m1",
			documentId: "d1",
			usable: false,
		});
		expect(cache.size).toBe(2);

		// A document's change drops only answers about that document.
		await cache.change({ documentId: "d1" }, async () => {});
		expect(cache.size).toBe(1);
		const reads = s.reads;
		await cache.read(digest(4), s.load(digest(4)));
		expect(s.reads).toBe(reads);
	});

	test("bounded: the least recently used answer goes first", async () => {
		const cache = new CredentialCache(2);
		const rows = new Map([1, 2, 3].map((n) => [digest(n), { machineId: `m${n}`, usable: true }]));
		const s = store(rows);
		await cache.read(digest(1), s.load(digest(1)));
		await cache.read(digest(2), s.load(digest(2)));
		await cache.read(digest(1), s.load(digest(1)));
		await cache.read(digest(3), s.load(digest(3)));
		const reads = s.reads;
		await cache.read(digest(1), s.load(digest(1)));
		expect(s.reads).toBe(reads);
		await cache.read(digest(2), s.load(digest(2)));
		expect(s.reads).toBe(reads + 1);
	});
});

let clock: ManualClock;
const servers: TestServer[] = [];

beforeEach(() => {
	clock = new ManualClock();
});

afterEach(async () => {
	for (const server of servers.splice(0)) await server.close();
});

async function setup(kind: "sqlite" | "postgres") {
	const server = await startTestServer({
		clock,
		store: kind,
		env: { ...LOCAL_ENV, LOCAL_PLANNER_CREDENTIALS: "on" },
	});
	servers.push(server);
	const { target, jar, ...paired } = await pairedLocally(server);
	const documents = await Promise.all(
		["One", "Two"].map((title) =>
			server.context.domain.documents.create({ repository: "octo/score", title, createdBy: "ana" }),
		),
	);
	const planner = (documentId: string) => issuePlannerToken(target, paired.credential, documentId);
	/** The upgrade's status: 101 (the socket closed at once) or the refusal's. */
	const upgrade = async (token: string) => {
		const answer = await openAgentSocket({ url: server.url, token });
		answer.socket?.terminate();
		return answer.status;
	};
	return { server, target, jar, ...paired, documents, planner, upgrade };
}

for (const kind of runnableKinds()) {
	describe(`credentials checked once are still refused at once [${kind}]`, () => {
		test("revoking the machine: its credential and its Planner credentials, checked a moment before", async () => {
			const s = await setup(kind);
			const token = await s.planner(s.documents[0]!.id);
			for (let i = 0; i < 2; i++) {
				expect(
					(await cliRequest(s.target, "GET", "/api/connector/machine", { credential: s.credential })).status,
				).toBe(200);
				expect(await s.upgrade(token)).toBe(101);
			}
			expect((await pageRequest(s.target, s.jar, "DELETE", `/api/machines/${s.machineId}`)).status).toBe(204);
			const refused = await cliRequest(s.target, "GET", "/api/connector/machine", {
				credential: s.credential,
			});
			expect(refused.status).toBe(401);
			expect(((await refused.json()) as { code: string }).code).toBe("machine-revoked");
			expect(await s.upgrade(token)).toBe(401);
		});

		test("a Planner credential deleted with its document's withdrawal, or expired, is refused; the others still open", async () => {
			const s = await setup(kind);
			const [one, two] = s.documents;
			const first = await s.planner(one!.id);
			const second = await s.planner(two!.id);
			expect(await s.upgrade(first)).toBe(101);
			expect(await s.upgrade(second)).toBe(101);
			await s.server.context.machines.plannerCredentials.deleteForMachine(s.machineId, one!.id);
			expect(await s.upgrade(first)).toBe(401);
			expect(await s.upgrade(second)).toBe(101);
			await clock.advance(PLANNER_CREDENTIAL_TTL_MS);
			expect(await s.upgrade(second)).toBe(401);
		});
	});
}
