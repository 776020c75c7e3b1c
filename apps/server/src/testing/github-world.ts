// The emulated GitHub's accounts and repositories: who exists, which organizations they belong
// to, and what each account may do in each repository. Logins and names match case-insensitively,
// as on GitHub, and answers carry the canonical spelling.
import { EmulatorError } from "./github-emulator-errors";
import { type Fixture, type Role, roleSchema, type UserInput, userSchema } from "./github-fixture";

export interface User {
	login: string;
	id: number;
	name: string | null;
	/** Organization logins, canonical spelling. */
	orgs: string[];
}

export interface Org {
	login: string;
	id: number;
}

export interface Repository {
	id: number;
	owner: string;
	name: string;
	fullName: string;
	private: boolean;
	description: string | null;
	defaultBranch: string;
	/** Lower-cased login -> role. */
	roles: Map<string, Role>;
}

/** The permissions object GitHub puts on a repository for the authenticated user. */
export interface Permissions {
	admin: boolean;
	maintain: boolean;
	push: boolean;
	triage: boolean;
	pull: boolean;
}

const RANK: Record<Role, number> = { read: 1, triage: 2, write: 3, maintain: 4, admin: 5 };

/** What a role allows, as GitHub reports it: each role includes every lesser one. */
export function permissionsFor(role: Role | undefined): Permissions {
	const rank = role ? RANK[role] : 0;
	return { admin: rank >= 5, maintain: rank >= 4, push: rank >= 3, triage: rank >= 2, pull: rank >= 1 };
}

export class GitHubWorld {
	readonly #users = new Map<string, User>();
	readonly #orgs = new Map<string, Org>();
	readonly #repos = new Map<string, Repository>();
	#nextId: number;

	constructor(fixture: Fixture) {
		// Ids nobody chose start above every chosen one so they never collide (users, orgs and
		// repositories share nothing on GitHub, but a clash would still confuse a reader).
		const chosen = [...fixture.users.map((u) => u.id ?? 0), ...fixture.repositories.map((r) => r.id ?? 0)];
		this.#nextId = Math.max(1000, ...chosen) + 1;
		for (const user of fixture.users) this.addUser(user);
		for (const repo of fixture.repositories) {
			const [owner, name] = repo.fullName.split("/") as [string, string];
			const canonicalOwner = this.#users.get(owner.toLowerCase())?.login ?? this.#org(owner).login;
			this.#repos.set(repo.fullName.toLowerCase(), {
				id: repo.id ?? this.#nextId++,
				owner: canonicalOwner,
				name,
				fullName: `${canonicalOwner}/${name}`,
				private: repo.private,
				description: repo.description,
				defaultBranch: repo.defaultBranch,
				roles: new Map(Object.entries(repo.permissions).map(([login, role]) => [login.toLowerCase(), role])),
			});
		}
	}

	user(login: string): User | undefined {
		return this.#users.get(login.toLowerCase());
	}

	users(): User[] {
		return [...this.#users.values()];
	}

	org(login: string): Org | undefined {
		return this.#orgs.get(login.toLowerCase());
	}

	/** A user or organization by id (avatars are addressed by id). */
	accountById(id: number): User | Org | undefined {
		for (const account of [...this.#users.values(), ...this.#orgs.values()])
			if (account.id === id) return account;
		return undefined;
	}

	repository(owner: string, name: string): Repository | undefined {
		return this.#repos.get(`${owner}/${name}`.toLowerCase());
	}

	/** Adds an account (a runtime change: someone signed up). */
	addUser(input: UserInput): User {
		const parsed = userSchema.safeParse(input);
		if (!parsed.success) {
			throw new EmulatorError(
				"invalid-control-request",
				`The user is not valid: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}.`,
			);
		}
		const { login, id, name, orgs } = parsed.data;
		if (this.#users.has(login.toLowerCase()) || this.#orgs.has(login.toLowerCase())) {
			throw new EmulatorError(
				"duplicate-user",
				`The login "${login}" is already taken.`,
				"Choose another login.",
			);
		}
		const clash = orgs.find((o) => this.#users.has(o.toLowerCase()));
		if (clash) {
			throw new EmulatorError(
				"invalid-control-request",
				`"${clash}" is a user, so it cannot also be an organization.`,
				"Give the organization its own login.",
			);
		}
		const user: User = {
			login,
			id: id ?? this.#nextId++,
			name: name ?? null,
			orgs: orgs.map((o) => this.#org(o).login),
		};
		this.#users.set(login.toLowerCase(), user);
		return user;
	}

	/** Gives a user a role in a repository, or takes every role away with null. */
	setPermission(fullName: string, login: string, role: Role | null): void {
		const [owner = "", name = ""] = fullName.split("/");
		const repo = this.repository(owner, name);
		if (!repo) {
			throw new EmulatorError(
				"unknown-repository",
				`The repository "${fullName}" is not in the fixture.`,
				"Add it to the fixture's repositories.",
			);
		}
		const user = this.requireUser(login);
		if (role === null) repo.roles.delete(user.login.toLowerCase());
		else repo.roles.set(user.login.toLowerCase(), roleSchema.parse(role));
	}

	/** The user leaves the organization (nothing changes when they were not a member). */
	leaveOrganization(login: string, orgLogin: string): void {
		const user = this.requireUser(login);
		user.orgs = user.orgs.filter((o) => o.toLowerCase() !== orgLogin.toLowerCase());
	}

	requireUser(login: string): User {
		const user = this.user(login);
		if (!user) {
			throw new EmulatorError(
				"unknown-user",
				`There is no user "${login}" in the emulator.`,
				"Add the user first.",
			);
		}
		return user;
	}

	/**
	 * What the account may do, or undefined when it may not even see the repository: GitHub answers
	 * 404, not 403, for a private repository the caller cannot read. Anyone may read a public one.
	 */
	access(repo: Repository, login: string | null): Permissions | undefined {
		const role = login ? repo.roles.get(login.toLowerCase()) : undefined;
		if (repo.private && !role) return undefined;
		return permissionsFor(role ?? "read");
	}

	isMember(org: Org, login: string): boolean {
		return this.user(login)?.orgs.some((o) => o.toLowerCase() === org.login.toLowerCase()) ?? false;
	}

	/** The organization with this login, made on first mention (a user's orgs, a repository's owner). */
	#org(login: string): Org {
		let org = this.#orgs.get(login.toLowerCase());
		if (!org) {
			org = { login, id: this.#nextId++ };
			this.#orgs.set(login.toLowerCase(), org);
		}
		return org;
	}
}
