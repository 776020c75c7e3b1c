// The identity routes: GET /api/me, POST /auth/sign-out, and the sign-in routes of the AUTH_MODE in use.
import type { AppContext } from "../context";
import { clearCookie, readCookies } from "../http/cookies";
import { jsonResponse } from "../http/responses";
import type { Router } from "../http/router";
import { registerGitHubAuthRoutes } from "./github/routes";
import { assertSameOrigin, requireUser } from "./guards";
import { registerLocalAuthRoutes } from "./local-routes";
import { SESSION_COOKIE } from "./sessions";

export function registerAuthRoutes(router: Router, ctx: AppContext): void {
	router.get("/api/me", async ({ req }) => {
		const user = await requireUser(ctx, req);
		return jsonResponse({
			login: user.login,
			name: user.name,
			avatarUrl: user.avatarUrl,
			mode: ctx.identity.mode,
		});
	});

	// What the sign-in page offers: GitHub, or (local mode, a laptop demo) the accounts to pick from.
	router.get("/api/auth", () => {
		const accounts = ctx.config.localAccounts?.users.map((u) => ({
			login: u.login,
			name: u.name ?? null,
			password: Boolean(u.password || u.passwordHash),
		}));
		return jsonResponse({ mode: ctx.identity.mode, ...(accounts && { accounts }) });
	});

	router.post("/auth/sign-out", async ({ req }) => {
		const cookie = readCookies(req).get(SESSION_COOKIE);
		if (cookie) {
			assertSameOrigin(req, ctx.config.publicUrl);
			await ctx.sessions.signOut(cookie);
		}
		// Signing out twice is fine: the answer is the same.
		return new Response(null, {
			status: 204,
			headers: {
				"set-cookie": clearCookie(ctx.config.publicUrl, SESSION_COOKIE),
				"cache-control": "no-store",
			},
		});
	});

	if (ctx.identity.mode === "github") registerGitHubAuthRoutes(router, ctx, ctx.identity);
	else registerLocalAuthRoutes(router, ctx, ctx.identity);
}
