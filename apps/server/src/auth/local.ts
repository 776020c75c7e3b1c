// Identity under AUTH_MODE=local: accounts, passwords, development bearers and repository permissions from LOCAL_ACCOUNTS.
import type { Config } from "../config";
import type { LocalAccounts } from "../local-accounts";
import type { Logger } from "../log";
import type { Account, Authorization, RepoPermission } from "./authorization";
import { authorizationExpired, IdentityError, unauthorized } from "./errors";
import type { LocalIdentity } from "./identity";
import { sameSecret } from "./tokens";

type LocalUser = LocalAccounts["users"][number];

/** A local account's authorization: it names the account and holds no GitHub token. */
export class LocalAuthorization implements Authorization {
	readonly kind = "local";
	constructor(readonly login: string) {}

	async accessToken(): Promise<string> {
		throw new IdentityError(
			"no-github-token",
			`The local account ${this.login} has no GitHub token.`,
			"GitHub tokens exist only under AUTH_MODE=github.",
		);
	}
}

/**
 * Verified against for an unknown login, so a wrong login costs what a wrong password does.
 * Made on first use: hashing takes tens of milliseconds and most servers never need it.
 */
let dummyHash: Promise<string> | undefined;

export function createLocalIdentity(deps: { config: Config; log: Logger }): LocalIdentity {
	const accounts = deps.config.localAccounts;
	if (!accounts) throw new Error("AUTH_MODE=local needs LOCAL_ACCOUNTS (the config supplies a default)");
	const { admit } = deps.config;
	const byLogin = new Map(accounts.users.map((u) => [u.login.toLowerCase(), u]));
	// Repository names compare without case, as GitHub's do; logins inside are spelled as `users` spells them.
	const repositories = new Map(
		Object.entries(accounts.repositories).map(([name, grants]) => [name.toLowerCase(), grants]),
	);
	const organizationsOf = (login: string) =>
		Object.entries(accounts.organizations)
			.filter(([, members]) => members.includes(login))
			.map(([org]) => org.toLowerCase());
	const withPasswordHash = accounts.users.some((u) => u.passwordHash);

	const user = (login: string): LocalUser | undefined => byLogin.get(login.toLowerCase());

	const account = (u: LocalUser): Account => ({
		login: u.login,
		kind: "local",
		name: u.name ?? null,
		avatarUrl: null,
		githubId: null,
	});

	async function passwordMatches(u: LocalUser | undefined, given: string | undefined): Promise<boolean> {
		if (!u) {
			if (withPasswordHash && given !== undefined) {
				dummyHash ??= Bun.password.hash("chopin-no-such-account");
				await Bun.password.verify(given, await dummyHash).catch(() => false);
			}
			sameSecret(given ?? "", "chopin-no-such-account");
			return false;
		}
		if (u.passwordHash) {
			if (given === undefined) return false;
			return Bun.password.verify(given, u.passwordHash.reveal()).catch(() => false);
		}
		if (u.password) return given !== undefined && sameSecret(given, u.password.reveal());
		// An account without a password signs in with its login alone: the laptop demo.
		return true;
	}

	const requireLocal = (authorization: Authorization): string => {
		if (authorization.kind !== "local") {
			throw new Error(`A ${authorization.kind} authorization cannot act under AUTH_MODE=local.`);
		}
		return authorization.login;
	};

	return {
		mode: "local",

		async signIn(login, password) {
			const u = user(login);
			if (!(await passwordMatches(u, password)) || !u) {
				throw unauthorized(
					"The login or password is wrong.",
					"Check LOCAL_ACCOUNTS for the accounts of this server.",
				);
			}
			return { account: account(u), authorization: new LocalAuthorization(u.login) };
		},

		async permission(authorization, repository): Promise<RepoPermission> {
			const login = requireLocal(authorization);
			return repositories.get(repository.toLowerCase())?.[login] ?? "none";
		},

		async admitted(authorization) {
			const login = requireLocal(authorization);
			if (admit.logins.length === 0 && admit.organizations.length === 0) return true;
			if (admit.logins.includes(login.toLowerCase())) return true;
			return organizationsOf(login).some((org) => admit.organizations.includes(org));
		},

		async verifyBearer(token) {
			if (!/^[\x21-\x7e]{1,2048}$/.test(token)) throw unauthorized("The bearer token is malformed.");
			// Every configured token is compared, each in constant time, so the time taken says nothing of which matched.
			let found: LocalUser | undefined;
			for (const u of accounts.users) {
				const configured = u.token?.reveal();
				if (configured !== undefined && sameSecret(token, configured)) found = u;
			}
			if (!found) {
				throw unauthorized(
					"No local account has this bearer token.",
					"Under AUTH_MODE=local, give the account a token in LOCAL_ACCOUNTS.",
				);
			}
			return { account: account(found), authorization: new LocalAuthorization(found.login) };
		},

		async store(authorization) {
			return { kind: "local", login: requireLocal(authorization) };
		},

		async restore(stored) {
			const u = stored.kind === "local" ? user(stored.login) : undefined;
			if (!u) {
				// The account left LOCAL_ACCOUNTS, or this was stored under AUTH_MODE=github.
				deps.log.warn("a stored authorization names no local account", {
					login: stored.login,
					kind: stored.kind,
				});
				throw authorizationExpired(stored.login);
			}
			return new LocalAuthorization(u.login);
		},

		forget() {},
	};
}
