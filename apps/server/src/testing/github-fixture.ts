// The GitHub emulator's fixture: the apps, users, tokens and repositories its fake GitHub holds,
// validated with zod so a typo in a test's fixture fails loudly instead of answering 404 later.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { EmulatorError } from "./github-emulator-errors";

/** Repository roles, named as GitHub names them in its settings (the API calls write "push" and read "pull"). */
export const roleSchema = z.enum(["admin", "maintain", "write", "triage", "read"]);
export type Role = z.infer<typeof roleSchema>;

/** GitHub's login rule: letters, digits and single inner hyphens, at most 39 characters. */
export const loginSchema = z
	.string()
	.regex(
		/^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/,
		"must be a GitHub login: letters, digits and single hyphens, at most 39 characters",
	);

const fullNameSchema = z
	.string()
	.regex(/^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/, 'must be "owner/name"');

/** A moment as milliseconds since the epoch or an ISO 8601 date-time; always milliseconds once parsed. */
export const instantSchema = z
	.union([z.number().int().nonnegative(), z.iso.datetime({ offset: true })])
	.transform((value) => (typeof value === "number" ? value : Date.parse(value)));

export const appSchema = z.strictObject({
	clientId: z.string().min(1),
	clientSecret: z.string().min(1),
	/** Shown on the sign-in page; the client id when absent. */
	name: z.string().min(1).optional(),
	/** When set, an authorize request's redirect_uri must have this URL's origin; it is also the default. */
	redirectUri: z.url({ protocol: /^https?$/ }).optional(),
});

export const userSchema = z.strictObject({
	login: loginSchema,
	id: z.number().int().positive().optional(),
	name: z.string().nullable().optional(),
	orgs: z.array(loginSchema).default([]),
});
export type UserInput = z.input<typeof userSchema>;

export const tokenSchema = z.strictObject({
	token: z.string().min(1),
	login: loginSchema,
	expiresAt: instantSchema.optional(),
});
export type TokenInput = z.input<typeof tokenSchema>;

/** A token issued at run time: like a fixture token, but a fresh ghu_ one when none is given. */
export const addTokenSchema = tokenSchema.extend({ token: z.string().min(1).optional() });
export type AddTokenInput = z.input<typeof addTokenSchema>;

export const repositorySchema = z.strictObject({
	fullName: fullNameSchema,
	id: z.number().int().positive().optional(),
	private: z.boolean().default(false),
	description: z.string().nullable().default(null),
	defaultBranch: z.string().min(1).default("main"),
	permissions: z.record(loginSchema, roleSchema).default({}),
});

const fixtureShape = z.strictObject({
	apps: z.array(appSchema).min(1),
	users: z.array(userSchema).default([]),
	tokens: z.array(tokenSchema).default([]),
	repositories: z.array(repositorySchema).default([]),
});

/** Cross-references zod cannot see field by field: duplicates and names that point nowhere. */
export const fixtureSchema = fixtureShape.superRefine((fixture, ctx) => {
	const issue = (path: (string | number)[], message: string) =>
		ctx.addIssue({ code: "custom", path, message });
	const firstSeen = <T>(
		items: T[],
		key: (item: T) => string | number | undefined,
		path: (i: number) => (string | number)[],
		what: string,
	) => {
		const seen = new Set<string | number>();
		items.forEach((item, i) => {
			const k = key(item);
			if (k === undefined) return;
			if (seen.has(k)) issue(path(i), `duplicate ${what} ${JSON.stringify(k)}`);
			seen.add(k);
		});
	};
	firstSeen(
		fixture.apps,
		(a) => a.clientId,
		(i) => ["apps", i, "clientId"],
		"clientId",
	);
	firstSeen(
		fixture.users,
		(u) => u.login.toLowerCase(),
		(i) => ["users", i, "login"],
		"login",
	);
	firstSeen(
		fixture.tokens,
		(t) => t.token,
		(i) => ["tokens", i, "token"],
		"token",
	);
	firstSeen(
		fixture.repositories,
		(r) => r.fullName.toLowerCase(),
		(i) => ["repositories", i, "fullName"],
		"repository",
	);
	const ids = [
		...fixture.users.map((u, i) => ({ id: u.id, path: ["users", i, "id"] })),
		...fixture.repositories.map((r, i) => ({ id: r.id, path: ["repositories", i, "id"] })),
	];
	firstSeen(
		ids,
		(x) => x.id,
		(i) => ids[i]!.path,
		"id",
	);

	const logins = new Set(fixture.users.map((u) => u.login.toLowerCase()));
	fixture.tokens.forEach((t, i) => {
		if (!logins.has(t.login.toLowerCase())) issue(["tokens", i, "login"], `no user "${t.login}" in users`);
	});
	fixture.repositories.forEach((r, i) => {
		for (const login of Object.keys(r.permissions)) {
			if (!logins.has(login.toLowerCase()))
				issue(["repositories", i, "permissions", login], `no user "${login}" in users`);
		}
	});
	fixture.users.forEach((u, i) => {
		u.orgs.forEach((org, j) => {
			if (logins.has(org.toLowerCase()))
				issue(["users", i, "orgs", j], `"${org}" is a user; an organization needs its own login`);
		});
	});
});

export type Fixture = z.infer<typeof fixtureSchema>;
export type FixtureInput = z.input<typeof fixtureSchema>;

/** Validates a fixture, throwing fixture-invalid with every problem listed by path. */
export function parseFixture(input: unknown, source = "The fixture"): Fixture {
	const result = fixtureSchema.safeParse(input);
	if (result.success) return result.data;
	const problems = result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
	throw new EmulatorError(
		"fixture-invalid",
		`${source} is not a valid GitHub emulator fixture: ${problems.join("; ")}.`,
		"Fix the fields listed; docs/github-emulator.md describes the fixture format.",
		problems,
	);
}

/** Reads and validates a fixture file (JSON). */
export function loadFixtureFile(path: string): Fixture {
	let text: string;
	try {
		text = readFileSync(path, "utf8");
	} catch (err) {
		throw new EmulatorError(
			"fixture-unreadable",
			`Cannot read the fixture file ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)}).`,
			"Pass --fixture with the path of a JSON file, such as apps/server/src/testing/github-fixture.example.json.",
		);
	}
	let json: unknown;
	try {
		json = JSON.parse(text);
	} catch (err) {
		throw new EmulatorError(
			"fixture-unreadable",
			`The fixture file ${path} is not JSON (${(err as Error).message}).`,
			"Check the file's syntax.",
		);
	}
	return parseFixture(json, `The fixture file ${path}`);
}
