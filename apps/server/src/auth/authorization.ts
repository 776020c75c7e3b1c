// What acts for an account (an Authorization), who an account is, repository permissions, and the stored form of an authorization.
import { z } from "zod";
import { loginSchema } from "../local-accounts";

export const accountKindSchema = z.enum(["github", "local"]);
export type AccountKind = z.infer<typeof accountKindSchema>;

/**
 * What acts for an account: a browser sign-in's, a paired machine's, or a client's bearer.
 * GitHub mode: `accessToken()` is the user's GitHub token, renewed first when it is about to
 * expire. Local mode: there is no token and it rejects with `no-github-token`.
 */
export interface Authorization {
	readonly login: string;
	readonly kind: AccountKind;
	accessToken(): Promise<string>;
}

/** Who someone is, as sign-in and bearer checks report it. */
export const accountSchema = z.object({
	login: loginSchema,
	kind: accountKindSchema,
	name: z.string().nullable(),
	avatarUrl: z.string().nullable(),
	githubId: z.number().int().nullable(),
});
export type Account = z.infer<typeof accountSchema>;

/** An account's access to one repository, from none up to admin. */
export const repoPermissionSchema = z.enum(["none", "read", "write", "admin"]);
export type RepoPermission = z.infer<typeof repoPermissionSchema>;

const RANK: Record<RepoPermission, number> = { none: 0, read: 1, write: 2, admin: 3 };

/** True when `have` includes `need`: admin includes write, which includes read. */
export function permits(have: RepoPermission, need: Exclude<RepoPermission, "none">): boolean {
	return RANK[have] >= RANK[need];
}

const bytes = z.custom<Uint8Array>((v) => v instanceof Uint8Array, "must be bytes");

/**
 * An authorization as a table row can keep it (a paired machine keeps the confirming person's).
 * GitHub tokens are sealed with the server's secret key for one `binding` (see identity.store);
 * times are milliseconds since the epoch, null when GitHub gave none.
 */
export const storedAuthorizationSchema = z.discriminatedUnion("kind", [
	z.strictObject({
		kind: z.literal("github"),
		login: loginSchema,
		githubId: z.number().int().nullable(),
		accessToken: bytes,
		refreshToken: bytes.nullable(),
		expiresAt: z.number().int().nullable(),
		refreshExpiresAt: z.number().int().nullable(),
	}),
	z.strictObject({ kind: z.literal("local"), login: loginSchema }),
]);
export type StoredAuthorization = z.infer<typeof storedAuthorizationSchema>;

/** What the owner of a restored authorization hears about it. */
export interface RestoreOptions {
	/** After each renewal: store the new sealed record in place of the old one. */
	onRenewed?(stored: StoredAuthorization): void | Promise<void>;
	/** Once, when the authorization can no longer be renewed (revoked, or its refresh token expired). */
	onEnded?(): void;
	/**
	 * Reads the stored record again. Called when GitHub refuses the refresh token: another process
	 * may have rotated it a moment ago, and its record then holds the pair that works.
	 */
	reload?(): Promise<StoredAuthorization | undefined>;
}

/** Renew before expiry when a token has at most this long left: on use, and when asked. */
export const RENEW_BEFORE_MS = 5 * 60_000;
