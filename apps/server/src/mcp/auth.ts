// Who calls /mcp: a run's own chopin_r_ credential (the run, acting as its machine's owner), or an account's bearer
// as the agent endpoint takes it (a GitHub token in GitHub mode, a local account's token in local mode). Refused
// before anything else with 401 (403 not admitted, 503 GitHub unavailable) as JSON.

import { accountResolver } from "../agent/principal";
import type { Authorization } from "../auth/authorization";
import { isIdentityError } from "../auth/errors";
import { parseBearer } from "../auth/tokens";
import type { RunPrincipal } from "../builds/service";
import type { AppContext } from "../context";
import { HttpError } from "../http/errors";

export type McpPrincipal =
	/** A run's credential: its run's tools and invoke_planner for its own document, as the machine's owner. */
	| { kind: "run"; login: string; run: RunPrincipal }
	/** An account's bearer: invoke_planner for any document it can push to. */
	| { kind: "account"; login: string; authorization: Authorization };

const CHALLENGE = { "www-authenticate": 'Bearer realm="chopin"' };

function unauthorized(message: string, hint?: string): HttpError {
	return new HttpError(401, "unauthorized", message, hint, undefined, CHALLENGE);
}

export async function authenticate(ctx: AppContext, req: Request): Promise<McpPrincipal> {
	let token: string;
	try {
		token = parseBearer(req.headers.get("authorization"));
	} catch {
		throw unauthorized(
			"/mcp needs a bearer token: a run's credential or your account's token.",
			"Send Authorization: Bearer <token>.",
		);
	}
	if (token.startsWith("chopin_r_")) {
		const run = await ctx.builds.verifyCredential(token);
		if (!run) {
			throw unauthorized(
				"This run credential is unknown, or its run was discarded, ended more than 15 minutes ago, or its machine was disconnected.",
			);
		}
		return { kind: "run", login: run.machine.owner, run };
	}
	// Machine and Planner credentials are not bearers here, and are never sent to GitHub.
	if (token.startsWith("chopin_")) {
		throw unauthorized(
			"This credential is not accepted on /mcp.",
			"Use a run's credential, or your account's token.",
		);
	}
	try {
		const principal = await accountResolver(ctx.identity).resolve(token);
		if (!principal) throw unauthorized("The bearer token is not accepted here.");
		if (!(await ctx.identity.admitted(principal.authorization))) {
			throw new HttpError(403, "not-admitted", `${principal.login} is not admitted to this Chopin server.`);
		}
		return { kind: "account", login: principal.login, authorization: principal.authorization };
	} catch (error) {
		if (error instanceof HttpError) throw error;
		if (isIdentityError(error, "unauthorized") || isIdentityError(error, "authorization-expired")) {
			throw unauthorized(
				"The bearer token is not accepted here.",
				"Send a GitHub token (or, on a local server, your account's token).",
			);
		}
		if (isIdentityError(error, "unavailable")) {
			throw new HttpError(
				503,
				"github-unavailable",
				"GitHub could not check the token just now.",
				"Try again in a minute.",
			);
		}
		throw error;
	}
}
