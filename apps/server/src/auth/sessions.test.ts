import { afterEach, beforeEach, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { type Env, loadConfig } from "../config";
import { createLogger } from "../log";
import { Secret } from "../secret";
import { describeStores } from "../store/testing";
import { type GitHubEmulator, startGitHubEmulator } from "../testing/github-emulator";
import { authorize, CALLBACK, testFixture } from "../testing/github-emulator-test-kit";
import type { Account } from "./authorization";
import { GitHubAuthorization } from "./github/authorization";
import { createIdentity, type GitHubIdentity, type Identity } from "./identity";
import { LocalAuthorization } from "./local";
import { Sessions } from "./sessions";
import { sha256Hex } from "./tokens";
import { findUser } from "./users";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const KEY = crypto.getRandomValues(new Uint8Array(32));
const alice: Account = { login: "alice", kind: "local", name: "Alice", avatarUrl: null, githubId: null };

let clock: ManualClock;
let gh: GitHubEmulator;
let open: Sessions[];

beforeEach(async () => {
	clock = new ManualClock();
	gh = await startGitHubEmulator({ fixture: testFixture(), clock });
	open = [];
});

afterEach(async () => {
	for (const s of open) await s.close();
	gh.verify();
	await gh.stop();
});

function makeIdentity(env: Env): Identity {
	const config = loadConfig(env, { cwd: "/tmp" });
	return createIdentity({
		config,
		clock,
		log: createLogger({ level: "silent" }),
		fetch,
		secretKey: new Secret(KEY),
		version: "test",
	});
}

const localIdentity = () =>
	makeIdentity({
		LOCAL_ACCOUNTS: JSON.stringify({ users: [{ login: "alice", name: "Alice" }], repositories: {} }),
	});

describeStores("sessions", (t) => {
	function sessions(identity: Identity, ttlMs = 30 * DAY): Sessions {
		const s = new Sessions({
			store: t.store,
			clock,
			log: createLogger({ level: "silent" }),
			identity,
			ttlMs,
		});
		open.push(s);
		return s;
	}

	test("a session is stored by its cookie's digest only; the cookie resolves to the live sign-in", async () => {
		const s = sessions(localIdentity());
		const { cookie, signIn } = await s.create(alice, new LocalAuthorization("alice"));
		expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
		const rows = await t.store.many(t.store.sql`SELECT * FROM browser_sessions`);
		expect(rows).toHaveLength(1);
		expect(rows[0]).toMatchObject({
			id_digest: sha256Hex(cookie),
			login: "alice",
			created_at: clock.now(),
			expires_at: clock.now() + 30 * DAY,
			github_access_enc: null,
		});
		expect(JSON.stringify(rows)).not.toContain(cookie);
		expect(await findUser(t.store, "alice")).toEqual({
			login: "alice",
			github_id: null,
			name: "Alice",
			avatar_url: null,
		});
		expect(signIn.sessionId).toBe(sha256Hex(cookie));
		expect((await s.resolve(cookie))?.login).toBe("alice");
		expect(s.liveSignIn("ALICE")?.sessionId).toBe(signIn.sessionId);
		expect(await s.resolve("x".repeat(43))).toBeNull();
		expect(await s.resolve("not a cookie")).toBeNull();
	});

	test("after a restart a session is live again only once its cookie is presented", async () => {
		const identity = localIdentity();
		const { cookie } = await sessions(identity).create(alice, new LocalAuthorization("alice"));
		const restarted = sessions(identity);
		expect(restarted.liveSignIn("alice")).toBeNull();
		const [a, b] = await Promise.all([restarted.resolve(cookie), restarted.resolve(cookie)]);
		// Concurrent requests share one restored authorization.
		expect(a).toBe(b!);
		expect(restarted.liveSignIn("alice")?.authorization).toBe(a!.authorization);
	});

	test("sign-out deletes the row, clears liveness and fires onSignOut; twice is harmless", async () => {
		const s = sessions(localIdentity());
		const signedOut: string[][] = [];
		const expired: unknown[] = [];
		s.onSignOut((login, id) => signedOut.push([login, id]));
		s.onSessionExpired((...args) => expired.push(args));
		const one = await s.create(alice, new LocalAuthorization("alice"));
		await clock.advance(1_000);
		const two = await s.create(alice, new LocalAuthorization("alice"));
		// The newest live sign-in is the one the agent endpoint gets.
		expect(s.liveSignIn("alice")?.sessionId).toBe(two.signIn.sessionId);
		expect(await s.signOut(two.cookie)).toBe(true);
		expect(signedOut).toEqual([["alice", two.signIn.sessionId]]);
		expect(s.liveSignIn("alice")?.sessionId).toBe(one.signIn.sessionId);
		expect(await s.resolve(two.cookie)).toBeNull();
		expect(await s.signOut(two.cookie)).toBe(false);
		await s.signOut(one.cookie);
		expect(s.liveSignIn("alice")).toBeNull();
		expect(signedOut).toHaveLength(2);
		expect(expired).toEqual([]);
		expect(await t.store.many(t.store.sql`SELECT id_digest FROM browser_sessions`)).toEqual([]);
	});

	test("a live session expires on time (SESSION_TTL_MS), firing onSessionExpired; a stale cookie finds nothing", async () => {
		const s = sessions(localIdentity(), 2 * HOUR);
		const expired: [string, string, string][] = [];
		s.onSessionExpired((login, id, reason) => expired.push([login, id, reason]));
		const { cookie, signIn } = await s.create(alice, new LocalAuthorization("alice"));
		await clock.advance(2 * HOUR - 1);
		expect(s.liveSignIn("alice")).not.toBeNull();
		await clock.advance(1);
		expect(expired).toEqual([["alice", signIn.sessionId, "expired"]]);
		expect(s.liveSignIn("alice")).toBeNull();
		await s.settled();
		expect(await s.resolve(cookie)).toBeNull();
		expect(await t.store.many(t.store.sql`SELECT id_digest FROM browser_sessions`)).toEqual([]);
	});

	test("a 30-day expiry beyond setTimeout's range still fires at the right moment", async () => {
		const s = sessions(localIdentity());
		const expired: string[] = [];
		s.onSessionExpired((login) => expired.push(login));
		await s.create(alice, new LocalAuthorization("alice"));
		await clock.advance(30 * DAY - 1);
		expect(expired).toEqual([]);
		await clock.advance(1);
		expect(expired).toEqual(["alice"]);
	});

	test("an expired session presented after a restart is refused and deleted; sweep deletes the rest", async () => {
		const identity = localIdentity();
		const first = sessions(identity, HOUR);
		const { cookie } = await first.create(alice, new LocalAuthorization("alice"));
		await first.create(alice, new LocalAuthorization("alice"));
		await first.close();
		await clock.advance(HOUR);
		const restarted = sessions(identity, HOUR);
		expect(await restarted.resolve(cookie)).toBeNull();
		expect(await restarted.sweep()).toBe(1);
		expect(await t.store.many(t.store.sql`SELECT id_digest FROM browser_sessions`)).toEqual([]);
	});

	test("GitHub tokens are sealed on the row (no token text), renewed on use, and survive a restart", async () => {
		const identity = makeIdentity({ ...gh.env() }) as GitHubIdentity;
		const { code } = await authorize(gh, "octocat");
		const { account, authorization } = await identity.signIn(code, CALLBACK);
		const access = await authorization.accessToken();
		const refresh = authorization.tokensForSealing().refreshToken!;
		const s = sessions(identity);
		const { cookie } = await s.create(account, authorization);

		const rowText = async () => {
			const rows = await t.store.many(t.store.sql`SELECT * FROM browser_sessions`);
			return rows
				.flatMap((r) => Object.values(r))
				.map((v) => (v instanceof Uint8Array ? Buffer.from(v).toString("latin1") : String(v)))
				.join("\n");
		};
		const before = await rowText();
		for (const secret of [access, refresh, "ghu_", "ghr_", cookie]) expect(before).not.toContain(secret);
		expect(await findUser(t.store, "octocat")).toMatchObject({ github_id: 583231, name: "The Octocat" });

		await clock.advance(8 * HOUR - 60_000);
		const renewed = await authorization.accessToken();
		expect(renewed).not.toBe(access);
		const after = await rowText();
		expect(after).not.toContain(renewed);
		expect(after).not.toBe(before);

		// A restarted process opens the row: the renewed pair, not the first one.
		const restarted = sessions(identity);
		const live = await restarted.resolve(cookie);
		expect(live?.authorization).toBeInstanceOf(GitHubAuthorization);
		expect(await live!.authorization.accessToken()).toBe(renewed);
	});

	test("a GitHub authorization that is revoked for good ends its session as expired (reason revoked)", async () => {
		const identity = makeIdentity({ ...gh.env() }) as GitHubIdentity;
		const { code } = await authorize(gh, "hubot");
		const { account, authorization } = await identity.signIn(code, CALLBACK);
		const s = sessions(identity);
		const reasons: string[] = [];
		s.onSessionExpired((_login, _id, reason) => reasons.push(reason));
		const { cookie } = await s.create(account, authorization);
		gh.revokeAuthorization("hubot");
		await expect(identity.permission(authorization, "score-team/score")).rejects.toMatchObject({
			code: "authorization-expired",
		});
		expect(reasons).toEqual(["revoked"]);
		await s.settled();
		expect(s.liveSignIn("hubot")).toBeNull();
		expect(await s.resolve(cookie)).toBeNull();
	});
});
