// GitHub mode's half of confirming a pairing: the fresh GitHub grant (/auth/github/start?intent=machine-pairing)
// becomes the machine's own authorization, then the browser goes back to the pairing's page.
import { problemResponse } from "../auth/problem-page";
import { upsertUser } from "../auth/users";
import type { AppContext } from "../context";
import { HttpError } from "../http/errors";
import { pairingNotFound } from "./errors";
import { PAIRING_INTENT } from "./pairings";

export function registerPairingGrant(ctx: AppContext): void {
	const { identity } = ctx;
	if (identity.mode !== "github") return;
	identity.grantHandlers.set(PAIRING_INTENT, async ({ account, authorization, req, next }) => {
		const id = /^\/pair\/(prg_[a-z2-7]{16})$/.exec(next)?.[1];
		try {
			if (!id) throw pairingNotFound();
			await upsertUser(ctx.store, account, ctx.clock.now());
			await ctx.machines.pairings.completeGrant(id, { login: account.login, authorization });
		} catch (error) {
			if (!(error instanceof HttpError)) throw error;
			return problemResponse(req, error, id ? { retry: { href: next, label: "Back to the pairing" } } : {});
		}
		return new Response(null, { status: 302, headers: { location: next, "cache-control": "no-store" } });
	});
}
