import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { loadConfig } from "../../config";
import { createLogger } from "../../log";
import { type GitHubEmulator, startGitHubEmulator } from "../../testing/github-emulator";
import { authorize, CALLBACK, testFixture } from "../../testing/github-emulator-test-kit";
import type { StoredAuthorization } from "../authorization";
import { IdentityError } from "../errors";
import type { GitHubIdentity } from "../identity";
import { SecretBox } from "../secret-box";
import type { GitHubAuthorization } from "./authorization";
import { createGitHubIdentity } from "./identity";

const HOUR = 3_600_000;
let clock: ManualClock;
let gh: GitHubEmulator;
let identity: GitHubIdentity;
const key = crypto.getRandomValues(new Uint8Array(32));

function makeIdentity(): GitHubIdentity {
	return createGitHubIdentity({
		config: loadConfig({ ...gh.env() }, { cwd: "/tmp" }),
		clock,
		log: createLogger({ level: "silent" }),
		fetch,
		box: new SecretBox(key),
		version: "test",
	});
}

async function signIn(login: string): Promise<GitHubAuthorization> {
	const { code } = await authorize(gh, login);
	return (await identity.signIn(code, CALLBACK)).authorization;
}

async function thrown(promise: Promise<unknown>): Promise<IdentityError> {
	try {
		await promise;
	} catch (error) {
		if (error instanceof IdentityError) return error;
		throw error;
	}
	throw new Error("expected an IdentityError");
}

const refreshes = () => gh.requests({ path: "/login/oauth/access_token" }).length;

beforeEach(async () => {
	clock = new ManualClock();
	gh = await startGitHubEmulator({ fixture: testFixture(), clock });
	identity = makeIdentity();
});

afterEach(async () => {
	gh.verify();
	await gh.stop();
});

describe("renewal", () => {
	test("the token is used as is until five minutes before expiry, then renewed once on use", async () => {
		const auth = await signIn("hubot");
		const first = await auth.accessToken();
		const issued = clock.now();
		expect(auth.expiresAt).toBe(issued + 8 * HOUR);
		await clock.advance(8 * HOUR - 5 * 60_000 - 1);
		expect(await auth.accessToken()).toBe(first);
		expect(refreshes()).toBe(1);

		let renewals = 0;
		auth.onRenewed(() => {
			renewals += 1;
		});
		await clock.advance(1);
		// Two callers at once share one renewal: GitHub rotates the refresh token on every use.
		const [a, b] = await Promise.all([auth.accessToken(), auth.accessToken()]);
		expect(a).toBe(b);
		expect(a).not.toBe(first);
		expect(refreshes()).toBe(2);
		expect(renewals).toBe(1);
		expect(auth.expiresAt).toBe(clock.now() + 8 * HOUR);
		// GitHub accepts the new token; the old one died with the rotation.
		expect((await identity.client.user(a)).login).toBe("hubot");
		expect(await thrown(identity.verifyBearer(first))).toMatchObject({ code: "unauthorized" });
	});

	test("renewIfDue and token({ minValidityMs }) renew earlier for a caller with its own schedule", async () => {
		const auth = await signIn("hubot");
		expect(await auth.renewIfDue()).toBe(false);
		await clock.advance(7 * HOUR);
		expect(await auth.renewIfDue(30 * 60_000)).toBe(false);
		await clock.advance(31 * 60_000);
		expect(await auth.renewIfDue(30 * 60_000)).toBe(true);
		const { expiresAt } = await auth.token({ minValidityMs: 25 * 60_000 });
		expect(expiresAt).toBe(clock.now() + 8 * HOUR);
		expect(refreshes()).toBe(2);
	});

	test("a refused refresh token ends the authorization for good: authorization-expired, onEnded once", async () => {
		const auth = await signIn("hubot");
		let ended = 0;
		auth.onEnded(() => {
			ended += 1;
		});
		gh.revokeAuthorization("hubot");
		await clock.advance(8 * HOUR);
		const error = await thrown(auth.accessToken());
		expect(error.code).toBe("authorization-expired");
		expect(error.message).toContain("hubot");
		expect(auth.ended).toBe(true);
		expect(ended).toBe(1);
		expect((await thrown(auth.accessToken())).code).toBe("authorization-expired");
		expect(refreshes()).toBe(2);
	});

	test("a GitHub outage keeps the current token while it lasts, and is unavailable once it has expired", async () => {
		const auth = await signIn("hubot");
		const first = await auth.accessToken();
		await clock.advance(8 * HOUR - 60_000);
		gh.inject({ kind: "status", status: 502, pathPrefix: "/login/oauth/access_token", times: 2 });
		expect(await auth.accessToken()).toBe(first);
		await clock.advance(60_000);
		const error = await thrown(auth.accessToken());
		expect(error.code).toBe("unavailable");
		expect(auth.ended).toBe(false);
		// GitHub is back: the next use renews.
		expect(await auth.accessToken()).not.toBe(first);
	});

	test("a refresh token past its own expiry ends the authorization without asking GitHub", async () => {
		const auth = await signIn("hubot");
		await clock.advance(auth.refreshExpiresAt! - clock.now());
		expect((await thrown(auth.accessToken())).code).toBe("authorization-expired");
		expect(refreshes()).toBe(1);
	});
});

describe("storing", () => {
	test("a stored authorization holds no token in the clear, opens for its binding only, and renews on its own", async () => {
		const auth = await signIn("octocat");
		const token = await auth.accessToken();
		const stored = await identity.store(auth, "machine:m1");
		expect(stored).toMatchObject({ kind: "github", login: "octocat", githubId: 583231 });
		const bytes = stored.kind === "github" ? [stored.accessToken, stored.refreshToken!] : [];
		for (const b of bytes) expect(Buffer.from(b).toString("latin1")).not.toContain("gh");

		await expect(identity.restore(stored, "machine:m2")).rejects.toMatchObject({
			code: "authorization-expired",
		});
		// Another server key cannot open it either (people sign in again).
		const otherKey = createGitHubIdentity({
			config: loadConfig({ ...gh.env() }, { cwd: "/tmp" }),
			clock,
			log: createLogger({ level: "silent" }),
			fetch,
			box: new SecretBox(crypto.getRandomValues(new Uint8Array(32))),
			version: "test",
		});
		await expect(otherKey.restore(stored, "machine:m1")).rejects.toMatchObject({
			code: "authorization-expired",
		});

		const saved: StoredAuthorization[] = [];
		let ended = false;
		const restored = await identity.restore(stored, "machine:m1", {
			onRenewed: (s) => {
				saved.push(s);
			},
			onEnded: () => {
				ended = true;
			},
		});
		expect(restored.login).toBe("octocat");
		expect(await restored.accessToken()).toBe(token);
		await clock.advance(8 * HOUR);
		const renewed = await restored.accessToken();
		expect(renewed).not.toBe(token);
		expect(saved).toHaveLength(1);
		const again = await identity.restore(saved[0]!, "machine:m1");
		expect(await again.accessToken()).toBe(renewed);
		expect(ended).toBe(false);
	});

	test("when another holder renewed the stored pair first, reload adopts its pair instead of ending", async () => {
		const auth = await signIn("octocat");
		let row = await identity.store(auth, "machine:m1");
		const reload = async () => row;
		const here = await identity.restore(row, "machine:m1", { reload });
		const there = await identity.restore(row, "machine:m1", {
			reload,
			onRenewed: (s) => {
				row = s;
			},
		});
		await clock.advance(8 * HOUR);
		const theirs = await there.accessToken();
		// `here` still holds the rotated-away pair: GitHub refuses it, the row has the new one.
		expect(await here.accessToken()).toBe(theirs);
		expect((here as GitHubAuthorization).ended).toBe(false);
	});

	test("a bearer is not storable; a local record does not restore under github", async () => {
		const token = await (await signIn("octocat")).accessToken();
		const { authorization } = await identity.verifyBearer(token);
		await expect(identity.store(authorization, "x")).rejects.toThrow("Only a GitHub user authorization");
		await expect(identity.restore({ kind: "local", login: "octocat" }, "x")).rejects.toMatchObject({
			code: "authorization-expired",
		});
	});
});
