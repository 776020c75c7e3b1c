// Local sign-in (AUTH_MODE=local): POST /auth/local/sign-in with a login and, when the account has one, its password.
import { z } from "zod";
import type { AppContext } from "../context";
import { clientAddress } from "../http/client-address";
import { serializeCookie } from "../http/cookies";
import { HttpError } from "../http/errors";
import { RateLimiter } from "../http/rate-limit";
import { jsonResponse } from "../http/responses";
import type { Router } from "../http/router";
import { isIdentityError } from "./errors";
import { notAdmitted } from "./guards";
import type { LocalIdentity } from "./identity";
import { SESSION_COOKIE } from "./sessions";

/** Per connecting address: a burst of 10 attempts, then one more every 6 seconds (10 a minute). */
export const SIGN_IN_LIMIT = { capacity: 10, refillMs: 6_000 };

const signInSchema = z.strictObject({
	login: z.string().min(1).max(100),
	password: z.string().max(1000).optional(),
});

export function registerLocalAuthRoutes(router: Router, ctx: AppContext, identity: LocalIdentity): void {
	const limiter = new RateLimiter({ ...SIGN_IN_LIMIT, clock: ctx.clock });

	router.post("/auth/local/sign-in", async (c) => {
		// Every attempt counts, before anything is checked, so guessing costs the same either way.
		const address = clientAddress(c.req.headers, c.server?.requestIP(c.req)?.address, ctx.config.proxyTrust);
		limiter.consume(address, "sign-in");
		const body = await c.json(signInSchema);
		let signedIn: Awaited<ReturnType<LocalIdentity["signIn"]>>;
		try {
			signedIn = await identity.signIn(body.login, body.password);
		} catch (error) {
			if (!isIdentityError(error, "unauthorized")) throw error;
			throw new HttpError(401, "invalid-credentials", "The login or password is wrong.", error.hint);
		}
		const { account, authorization } = signedIn;
		if (!(await identity.admitted(authorization))) throw notAdmitted(account.login);
		const { cookie } = await ctx.sessions.create(account, authorization);
		const publicUrl = ctx.config.publicUrl;
		return jsonResponse(
			{ login: account.login, name: account.name, avatarUrl: account.avatarUrl, mode: "local" },
			{
				headers: {
					"set-cookie": serializeCookie(publicUrl, SESSION_COOKIE, cookie, {
						maxAge: Math.floor(ctx.config.sessionTtlMs / 1000),
					}),
				},
			},
		);
	});
}
