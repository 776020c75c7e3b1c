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

/** A target over real HTTP (so the server sees the peer's address), with extra headers on every request. */
function viaHttp(publicUrl: string, headers: Record<string, string> = {}): Target {
	return {
		publicUrl,
		fetch: (req) => {
			const sent = new Request(req);
			for (const [name, value] of Object.entries(headers)) sent.headers.set(name, value);
			return fetch(sent);
		},
	};
}

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
		await refusal(await claim(server, b.id, "wrong"), 429, "rate-limited");
		// The right secret is never refused by the address's wrong guesses (nor counted).
		expect((await claim(server, b.id, b.secret)).status).toBe(200);
		// Nor is the right code of another pairing: the per-address limit charges and refuses failures only.
		const c = await start(server);
		expect((await confirm(server, jar, c.id, c.code)).status).toBe(200);
		await refusal(await confirm(server, jar, b.id, "AAAA-AAAA"), 429, "rate-limited");
		await clock.advance(GUESS_LIMIT.refillMs);
		await refusal(await claim(server, b.id, "wrong"), 401, "pairing-secret-wrong");
	});

	test("another client's wrong guesses from the same address never refuse a pairing's right-secret poll", async () => {
		const server = await serve(t);
		const mine = await start(server);
		const theirs = await start(server);
		// Ten wrong secrets (another pairing's, or guesses at mine) use up the address's guesses.
		for (let i = 0; i < GUESS_LIMIT.capacity; i++) {
			await refusal(await claim(server, i % 2 ? theirs.id : mine.id, "wrong"), 401, "pairing-secret-wrong");
		}
		await refusal(await claim(server, mine.id, "wrong"), 429, "rate-limited");
		await refusal(await claim(server, "prg_aaaaaaaaaaaaaaaa", "wrong"), 429, "rate-limited");
		for (let i = 0; i < 3; i++) {
			expect(await (await claim(server, mine.id, mine.secret)).json()).toEqual({
				status: "pending",
				expiresAt: mine.expiresAt,
			});
		}
		const { jar } = await signInLocally(server, "ana");
		expect((await confirm(server, jar, mine.id, mine.code)).status).toBe(200);
		const claimed = pairingClaimedSchema.parse(await (await claim(server, mine.id, mine.secret)).json());
		expect(claimed.status).toBe("claimed");
	});

	test("behind a trusted proxy, its header names the address the limit is kept for; from anyone else it is ignored", async () => {
		const trusting = await serve(t, {
			TRUSTED_PROXY_HEADER: "X-Forwarded-For",
			TRUSTED_PROXIES: "127.0.0.1",
		});
		const plain = await serve(t);
		for (const server of [trusting, plain]) {
			const target = viaHttp(server.publicUrl);
			const { id } = await start(target);
			const from = (client: string) =>
				viaHttp(server.publicUrl, { "x-forwarded-for": `10.9.9.9, ${client}` });
			for (let i = 0; i < GUESS_LIMIT.capacity; i++) {
				await refusal(await claim(from("10.0.0.1"), id, "wrong"), 401, "pairing-secret-wrong");
			}
			await refusal(await claim(from("10.0.0.1"), id, "wrong"), 429, "rate-limited");
			// Another client behind the proxy has its own guesses; without the trust, everyone shares the peer's.
			const other = await claim(from("10.0.0.2"), id, "wrong");
			if (server === trusting) await refusal(other, 401, "pairing-secret-wrong");
			else await refusal(other, 429, "rate-limited");
		}
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
