// The schema of LOCAL_ACCOUNTS: who can sign in under AUTH_MODE=local and what each may do.
import { z } from "zod";
import { Secret } from "./secret";

/** A GitHub-style login: letters, digits and single inner hyphens, at most 39 characters. */
export const loginSchema = z
	.string()
	.regex(/^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/, "must be a GitHub-style login");

/** `owner/name`, as GitHub spells a repository. */
export const repositoryNameSchema = z
	.string()
	.regex(/^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}\/[A-Za-z0-9._-]{1,100}$/, "must be owner/name")
	.refine((name) => !name.endsWith("/.") && !name.endsWith("/.."), "must be owner/name");

export const permissionSchema = z.enum(["admin", "write", "read"]);
export type Permission = z.infer<typeof permissionSchema>;

/** A hash Bun.password makes and verifies: argon2id, argon2i, argon2d or bcrypt, in PHC/modular form. */
const passwordHashSchema = z
	.string()
	.max(1000)
	.regex(/^\$(?:argon2(?:id|i|d)|2[abxy]?)\$\S+$/, "must be an argon2 or bcrypt hash from Bun.password.hash")
	.transform((h) => new Secret(h));

const userSchema = z
	.strictObject({
		login: loginSchema,
		name: z.string().min(1).max(200).optional(),
		/** Plain text, for a laptop demo; prefer passwordHash anywhere else. */
		password: z
			.string()
			.min(1)
			.max(1000)
			.transform((p) => new Secret(p))
			.optional(),
		passwordHash: passwordHashSchema.optional(),
		/** A bearer this account's agents may send instead of a GitHub token (development only). */
		token: z
			.string()
			.min(16, "must be at least 16 characters")
			.max(256)
			.regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces")
			.transform((t) => new Secret(t))
			.optional(),
	})
	.refine((user) => !(user.password && user.passwordHash), {
		message: "give password or passwordHash, not both",
		path: ["passwordHash"],
	});

export const localAccountsSchema = z
	.strictObject({
		users: z.array(userSchema).min(1, "must list at least one user"),
		repositories: z.record(repositoryNameSchema, z.record(z.string(), permissionSchema)),
		organizations: z.record(loginSchema, z.array(z.string())).default({}),
	})
	.superRefine((accounts, ctx) => {
		const seen = new Set<string>();
		const known = new Set<string>();
		const tokens = new Set<string>();
		accounts.users.forEach((user, i) => {
			// Zod runs this check even when a field failed its own (the token then is no Secret yet).
			const token = user.token instanceof Secret ? user.token.reveal() : undefined;
			if (token !== undefined) {
				// Two accounts with one bearer would make the bearer name nobody for sure.
				if (tokens.has(token))
					ctx.addIssue({
						code: "custom",
						path: ["users", i, "token"],
						message: "another user has the same token",
					});
				tokens.add(token);
			}
			const key = user.login.toLowerCase();
			if (seen.has(key))
				ctx.addIssue({
					code: "custom",
					path: ["users", i, "login"],
					message: "the same login is listed twice",
				});
			seen.add(key);
			known.add(user.login);
		});
		// Permissions name logins exactly as `users` spells them, so a typo is an error, not a silent denial.
		for (const [repo, grants] of Object.entries(accounts.repositories)) {
			for (const login of Object.keys(grants)) {
				if (!known.has(login)) {
					ctx.addIssue({
						code: "custom",
						path: ["repositories", repo, login],
						message: "not a login listed in users",
					});
				}
			}
		}
		for (const [org, members] of Object.entries(accounts.organizations)) {
			members.forEach((login, i) => {
				if (!known.has(login)) {
					ctx.addIssue({
						code: "custom",
						path: ["organizations", org, i],
						message: "not a login listed in users",
					});
				}
			});
		}
	});

export type LocalAccounts = z.output<typeof localAccountsSchema>;

/** Used when LOCAL_ACCOUNTS is unset: one account, `demo`, administering `demo/score`. */
export const DEFAULT_LOCAL_ACCOUNTS = {
	users: [{ login: "demo", name: "Demo" }],
	repositories: { "demo/score": { demo: "admin" } },
	organizations: {},
} as const satisfies z.input<typeof localAccountsSchema>;
