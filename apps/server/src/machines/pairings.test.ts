import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { pairingClaimedSchema, pairingStartedSchema } from "@chopin/agent-link/machine";
import type { Env } from "../config";
import { describeStores, runnableKinds, type StoreFixture } from "../store/testing";
import {
	cliRequest,
	LOCAL_ENV,
	pageRequest,
	pairingStartBody,
	pairLocally,
	type Target,
	TEST_CLIENT,
} from "../testing/machines";
import { startTestServer, type TestServer } from "../testing/server";
import { signInLocally } from "../testing/sign-in";
import { type StoreServer, startStoreServer } from "../testing/store-server";
import { CODE_GUESS_LIMIT, GUESS_LIMIT, MAX_PENDING_PER_ADDRESS, PAIRING_TTL_MS } from "./pairings";

let clock: ManualClock;
let servers: StoreServer[];

beforeEach(() => {
	clock = new ManualClock();
	servers = [];
});
afterEach(async () => {
	for (const s of servers.splice(0)) await s.stop();
});

async function serve(t: StoreFixture, env: Env = {}): Promise<StoreServer> {
	const server = await startStoreServer({ store: t.store, clock, env: { ...LOCAL_ENV, ...env } });
	servers.push(server);
	return server;
}

async function start(target: Target, repositories?: string[]) {
	const res = await cliRequest(target, "POST", "/api/connector/pairings", {
		body: pairingStartBody(repositories),
	});
	expect(res.status).toBe(201);
	return pairingStartedSchema.parse(await res.json());
}

const confirm = (
	target: Target,
	jar: Parameters<typeof pageRequest>[1],
	id: string,
	code: string,
	autoRun = true,
) => pageRequest(target, jar, "POST", `/api/connector/pairings/${id}/confirm`, { code, autoRun });

const claim = (target: Target, id: string, secret: string) =>
	cliRequest(target, "POST", `/api/connector/pairings/${id}/claim`, { body: { secret } });

async function refusal(res: Response, status: number, code: string) {
	const body = (await res.json()) as { code: string; message: string };
	expect({ status: res.status, code: body.code }).toEqual({ status, code });
	expect(body.message).not.toMatch(/chopin_m_/);
	return body;
}

describeStores("pairing a machine", (t) => {
	test("start → confirm by a person with push access → claim, whose credential comes out exactly once", async () => {
		const server = await serve(t);
		const started = await start(server);
		expect(started.link).toBe(`${server.publicUrl}/pair/${started.id}`);
		expect(started.code).toMatch(/^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/);
		expect(started.expiresAt).toBe(clock.now() + PAIRING_TTL_MS);

		// Until someone confirms, the poll says pending.
		expect(await (await claim(server, started.id, started.secret)).json()).toEqual({
			status: "pending",
			expiresAt: started.expiresAt,
		});

		const { jar } = await signInLocally(server, "ana");
		const view = await pageRequest(server, jar, "GET", `/api/connector/pairings/${started.id}`);
		const shown = (await view.json()) as { pairing: Record<string, unknown> };
		expect(shown.pairing).toMatchObject({
			status: "pending",
			label: "ana's laptop",
			repositories: ["octo/score"],
		});
		expect(JSON.stringify(shown)).not.toContain(started.code);

		const confirmed = await confirm(server, jar, started.id, started.code, true);
		expect(confirmed.status).toBe(200);
		const machine = ((await confirmed.json()) as { status: string; machine: { id: string } }).machine;
		expect(machine).toMatchObject({ label: "ana's laptop", owner: "ana", autoRun: true });
		expect(machine.id).toMatch(/^mch_/);

		const claimed = await claim(server, started.id, started.secret);
		const body = pairingClaimedSchema.parse(await claimed.json());
		expect(body).toMatchObject({ status: "claimed", machine: { id: machine.id, owner: "ana" } });
		if (body.status !== "claimed") throw new Error("unreachable");
		expect(body.credential).toMatch(/^chopin_m_[A-Za-z0-9_-]{43}$/);

		// Only the digest is stored.
		const rows = await t.store.many(t.store.sql`SELECT * FROM machines`);
		expect(rows).toHaveLength(1);
		expect(JSON.stringify(rows)).not.toContain(body.credential);
		expect(rows[0]!.credential_digest).toBe(
			new Bun.CryptoHasher("sha256").update(body.credential).digest("hex"),
		);

		await refusal(await claim(server, started.id, started.secret), 409, "pairing-claimed");
		const info = await cliRequest(server, "GET", "/api/connector/machine", { credential: body.credential });
		expect(await info.json()).toEqual({
			machine: {
				id: machine.id,
				label: "ana's laptop",
				owner: "ana",
				autoRun: true,
				repositories: ["octo/score"],
				createdAt: clock.now(),
			},
		});
		// Nothing anywhere logged it.
		expect(server.logs.join("\n")).not.toContain(body.credential);
		expect(server.logs.join("\n")).not.toContain(started.secret);
	});

	test("a person without push access on any of the pairing's repositories is refused", async () => {
		const server = await serve(t);
		const started = await start(server, ["octo/score"]);
		const { jar } = await signInLocally(server, "ben");
		const res = await confirm(server, jar, started.id, started.code);
		const body = await refusal(res, 403, "repository-forbidden");
		expect(body.message).toContain("octo/score");
		// Push on one repository of several is enough.
		const two = await start(server, ["octo/score", "octo/other"]);
		const { jar: cy } = await signInLocally(server, "cy");
		expect((await confirm(server, cy, two.id, two.code)).status).toBe(200);
	});

	test("confirming needs a session; a confirmed pairing cannot be confirmed again", async () => {
		const server = await serve(t);
		const started = await start(server);
		const anonymous = await cliRequest(server, "POST", `/api/connector/pairings/${started.id}/confirm`, {
			body: { code: started.code, autoRun: false },
		});
		await refusal(anonymous, 401, "sign-in-required");
		const { jar } = await signInLocally(server, "ana");
		expect((await confirm(server, jar, started.id, started.code)).status).toBe(200);
		const { jar: cy } = await signInLocally(server, "cy");
		await refusal(await confirm(server, cy, started.id, started.code), 409, "pairing-confirmed");
	});

	test("a pairing expires 5 minutes after it starts: confirm and claim answer pairing-expired", async () => {
		const server = await serve(t);
		const a = await start(server);
		const b = await start(server);
		const { jar } = await signInLocally(server, "ana");
		expect((await confirm(server, jar, b.id, b.code)).status).toBe(200);
		await clock.advance(PAIRING_TTL_MS);
		await refusal(await confirm(server, jar, a.id, a.code), 410, "pairing-expired");
		await refusal(await claim(server, a.id, a.secret), 410, "pairing-expired");
		// Confirmed but never claimed in time: the credential never comes out, and the sweep removes the machine.
		await refusal(await claim(server, b.id, b.secret), 410, "pairing-expired");
		// The periodic sweep may have run already while the clock moved; either way one round removes it.
		await server.context.machines.settled();
		await server.context.machines.sweep();
		expect(await t.store.many(t.store.sql`SELECT id FROM machines`)).toEqual([]);
		const view = await pageRequest(server, jar, "GET", `/api/connector/pairings/${a.id}`);
		expect(((await view.json()) as { pairing: { status: string } }).pairing.status).toBe("expired");
	});

	test("refusals: unknown pairing, wrong secret, wrong code, and a client too old", async () => {
		const server = await serve(t, { MIN_CLI_VERSION: "0.2.0" });
		const started = await start(server);
		await refusal(await claim(server, "prg_aaaaaaaaaaaaaaaa", started.secret), 404, "pairing-not-found");
		await refusal(await claim(server, started.id, "not-the-secret"), 401, "pairing-secret-wrong");
		const { jar } = await signInLocally(server, "ana");
		await refusal(await confirm(server, jar, started.id, "AAAA-AAAA"), 400, "pairing-code-wrong");
		await refusal(await confirm(server, jar, "prg_aaaaaaaaaaaaaaaa", started.code), 404, "pairing-not-found");
		const old = await cliRequest(server, "POST", "/api/connector/pairings", {
			body: { ...pairingStartBody(), client: { ...TEST_CLIENT, version: "0.1.9" } },
		});
		const body = await refusal(old, 426, "client-version-refused");
		expect(body.message).toContain("npm install -g @chopin/cli@");
		// The right code still works after a wrong one.
		expect((await confirm(server, jar, started.id, started.code)).status).toBe(200);
	});

	test("wrong codes and wrong secrets are rate limited (per pairing and per address)", async () => {
		const server = await serve(t);
		const { jar } = await signInLocally(server, "ana");
		const a = await start(server);
		for (let i = 0; i < CODE_GUESS_LIMIT.capacity; i++) {
			await refusal(await confirm(server, jar, a.id, "AAAA-AAAA"), 400, "pairing-code-wrong");
		}
		const limited = await confirm(server, jar, a.id, a.code);
		await refusal(limited, 429, "rate-limited");
		expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
		// The address has 5 guesses left: wrong secrets use them up.
		const b = await start(server);
		for (let i = CODE_GUESS_LIMIT.capacity; i < GUESS_LIMIT.capacity; i++) {
			await refusal(await claim(server, b.id, "wrong"), 401, "pairing-secret-wrong");
		}
		await refusal(await claim(server, b.id, b.secret), 429, "rate-limited");
		// Polling with the right secret never counted: after a wait, it works again.
		await clock.advance(GUESS_LIMIT.refillMs);
		expect((await claim(server, b.id, b.secret)).status).toBe(200);
	});

	test("pending pairings are bounded per address", async () => {
		const server = await serve(t);
		for (let i = 0; i < MAX_PENDING_PER_ADDRESS; i++) await start(server);
		const res = await cliRequest(server, "POST", "/api/connector/pairings", { body: pairingStartBody() });
		await refusal(res, 429, "pairings-full");
		// An expired one no longer counts.
		await clock.advance(PAIRING_TTL_MS);
		await start(server);
	});

	test("starting pairings is rate limited per address", async () => {
		const server = await serve(t);
		const { jar } = await signInLocally(server, "ana");
		for (let i = 0; i < 10; i++) {
			// Each is confirmed, so none stays pending and only the start limit applies.
			const { id, code } = await start(server);
			expect((await confirm(server, jar, id, code)).status).toBe(200);
		}
		await refusal(
			await cliRequest(server, "POST", "/api/connector/pairings", { body: pairingStartBody() }),
			429,
			"rate-limited",
		);
	});
});

describe("the credential survives a restart", () => {
	const open: TestServer[] = [];
	afterEach(async () => {
		for (const s of open.splice(0)) await s.close();
	});

	for (const kind of runnableKinds()) {
		test(`paired before a restart, it still works after it [${kind}]`, async () => {
			const server = await startTestServer({ store: kind, clock, env: LOCAL_ENV });
			open.push(server);
			const target = {
				fetch: (req: Request) => server.fetch(req),
				get publicUrl() {
					return server.context.config.publicUrl;
				},
			};
			const { jar } = await signInLocally(target, "ana");
			const { credential, machineId } = await pairLocally(target, jar);
			await server.restart();
			// No session, no pairing: the credential alone.
			const res = await cliRequest(target, "GET", "/api/connector/machine", { credential });
			expect(res.status).toBe(200);
			expect(((await res.json()) as { machine: { id: string } }).machine.id).toBe(machineId);
		});
	}
});
