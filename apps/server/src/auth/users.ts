// The users table: one row per person who signed in, with the profile /api/me shows.
import { z } from "zod";
import type { Db, Store } from "../store/store";
import type { Account } from "./authorization";

export const userRowSchema = z.object({
	login: z.string(),
	github_id: z.number().int().nullable(),
	name: z.string().nullable(),
	avatar_url: z.string().nullable(),
});
export type UserRow = z.infer<typeof userRowSchema>;

/**
 * Inserts or updates the account's row. A GitHub account renamed since its last sign-in comes
 * back under a new login: the old row keeps its history but gives up the GitHub id, which is unique.
 */
export async function upsertUser(store: Store, account: Account, now: number): Promise<void> {
	await store.transaction(async (tx) => {
		if (account.githubId !== null) {
			await tx.sql`UPDATE users SET github_id = NULL WHERE github_id = ${account.githubId} AND login <> ${account.login}`;
		}
		await tx.sql`
			INSERT INTO users (login, github_id, name, avatar_url, created_at)
			VALUES (${account.login}, ${account.githubId}, ${account.name}, ${account.avatarUrl}, ${now})
			ON CONFLICT (login) DO UPDATE SET
				github_id = excluded.github_id, name = excluded.name, avatar_url = excluded.avatar_url`;
	});
}

export async function findUser(db: Db, login: string): Promise<UserRow | undefined> {
	return db.one(
		db.sql`SELECT login, github_id, name, avatar_url FROM users WHERE login = ${login}`,
		userRowSchema,
	);
}
