import { describe, expect, test } from "bun:test";
import { type Env, loadConfig } from "../config";
import { createLogger } from "../log";
import { IdentityError } from "./errors";
import { createLocalIdentity, LocalAuthorization } from "./local";

const ACCOUNTS = {
	users: [
		{ login: "alice", name: "Alice", password: "alice-password" },
		{ login: "bob", passwordHash: await Bun.password.hash("bob-password") },
		{ login: "carol", token: "carol-dev-token-0123456789" },
		{ login: "dave" },
	],
	repositories: {
		"acme/app": { alice: "admin", bob: "write", carol: "read" },
		"acme/docs": { dave: "write" },
	},
	organizations: { acme: ["alice", "bob"], guild: ["dave"] },
};

function makeIdentity(env: Env = {}) {
	const config = loadConfig({ LOCAL_ACCOUNTS: JSON.stringify(ACCOUNTS), ...env }, { cwd: "/tmp" });
	return createLocalIdentity({ config, log: createLogger({ level: "silent" }) });
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

describe("signIn", () => {
	test("a plain password, a Bun.password hash, or no password at all", async () => {
		const identity = makeIdentity();
		const alice = await identity.signIn("alice", "alice-password");
		expect(alice.account).toEqual({
			login: "alice",
			kind: "local",
			name: "Alice",
			avatarUrl: null,
			githubId: null,
		});
		expect(alice.authorization).toBeInstanceOf(LocalAuthorization);
		expect((await identity.signIn("bob", "bob-password")).account.login).toBe("bob");
		// Logins compare without case; the account's own spelling comes back.
		expect((await identity.signIn("DAVE", undefined)).account.login).toBe("dave");
		expect((await identity.signIn("carol", "anything")).account.login).toBe("carol");
	});

	test("a wrong or missing password, or an unknown login, is unauthorized with one message", async () => {
		const identity = makeIdentity();
		const cases: [string, string | undefined][] = [
			["alice", "wrong"],
			["alice", undefined],
			["bob", "alice-password"],
			["bob", undefined],
			["zed", undefined],
			["zed", "bob-password"],
		];
		for (const [login, password] of cases) {
			const error = await thrown(identity.signIn(login, password));
			expect([error.code, error.message]).toEqual(["unauthorized", "The login or password is wrong."]);
		}
	});
});

describe("permission and admission", () => {
	test("permissions come from LOCAL_ACCOUNTS, repository names without case", async () => {
		const identity = makeIdentity();
		const check = (login: string, repo: string) => identity.permission(new LocalAuthorization(login), repo);
		expect(await check("alice", "acme/app")).toBe("admin");
		expect(await check("bob", "ACME/App")).toBe("write");
		expect(await check("carol", "acme/app")).toBe("read");
		expect(await check("dave", "acme/app")).toBe("none");
		expect(await check("alice", "acme/unknown")).toBe("none");
	});

	test("ADMIT by login or by LOCAL_ACCOUNTS organization; empty admits everyone", async () => {
		const all = makeIdentity();
		expect(await all.admitted(new LocalAuthorization("dave"))).toBe(true);
		const some = makeIdentity({ ADMIT: "Carol,org:ACME" });
		const admitted = async (login: string) => some.admitted(new LocalAuthorization(login));
		expect([
			await admitted("alice"),
			await admitted("bob"),
			await admitted("carol"),
			await admitted("dave"),
		]).toEqual([true, true, true, false]);
	});

	test("a local authorization has no GitHub token", async () => {
		const error = await thrown(new LocalAuthorization("alice").accessToken());
		expect(error.code).toBe("no-github-token");
	});
});

describe("verifyBearer", () => {
	test("accepts a configured token and refuses anything else as unauthorized", async () => {
		const identity = makeIdentity();
		const carol = await identity.verifyBearer("carol-dev-token-0123456789");
		expect(carol.account.login).toBe("carol");
		expect(carol.authorization.kind).toBe("local");
		for (const token of ["carol-dev-token-012345678", "nope", "carol dev", ""]) {
			expect((await thrown(identity.verifyBearer(token))).code).toBe("unauthorized");
		}
	});
});

describe("store and restore", () => {
	test("a local authorization stores as its login and restores while the account exists", async () => {
		const identity = makeIdentity();
		const stored = await identity.store(new LocalAuthorization("alice"), "machine:1");
		expect(stored).toEqual({ kind: "local", login: "alice" });
		expect((await identity.restore(stored, "machine:1")).login).toBe("alice");
		const gone = await thrown(identity.restore({ kind: "local", login: "zed" }, "machine:1"));
		expect(gone.code).toBe("authorization-expired");
	});
});
