// GET /api/v1/agent: the HTTP checks before a WebSocket opens, in the spec's order (404, 426, 403 Origin, 401,
// 403 admission, 503, 500), then the upgrade answering exactly chopin.agent.v1.
import {
	FEATURES_HEADER,
	type Feature,
	offersSubprotocol,
	parseFeaturesHeader,
	SUBPROTOCOL,
	subprotocolRequiredBody,
	type UpgradeRefusal,
} from "@chopin/agent-link";
import { isIdentityError } from "../auth/errors";
import { parseBearer } from "../auth/tokens";
import type { AppContext } from "../context";
import { jsonResponse } from "../http/responses";
import { isForeignOrigin, type RouteContext } from "../http/router";
import type { SocketData } from "../http/sockets";
import type { AgentPrincipal } from "./principal";

/** What an agent socket carries from its upgrade to its handlers. */
export interface AgentSocketData extends SocketData {
	kind: "agent";
	principal: AgentPrincipal;
	/** The features the request asked for, or null when it sent no Chopin-Agent-Features header. */
	requested: Feature[] | null;
	/** Set by the planner service when the socket opens. */
	linkId?: string;
}

/** Whether the endpoint exists: AGENT on and HARNESS=remote. */
export function agentEndpointEnabled(ctx: Pick<AppContext, "config">): boolean {
	return ctx.config.agent && ctx.config.harness === "remote";
}

type Reason = UpgradeRefusal["reason"];

function refuse(
	ctx: AppContext,
	reason: Reason,
	status: number,
	body: Record<string, unknown>,
	headers?: Record<string, string>,
): Response {
	ctx.log.info("agent upgrade refused", { reason, status });
	return jsonResponse(body, { status, headers });
}

/** Checks the upgrade request and opens the socket, or answers the HTTP refusal. */
export async function handleAgentUpgrade(c: RouteContext, ctx: AppContext): Promise<Response> {
	const { req } = c;
	if (!offersSubprotocol(req.headers.get("sec-websocket-protocol"))) {
		return refuse(ctx, "subprotocol-required", 426, subprotocolRequiredBody());
	}
	if (isForeignOrigin(req, ctx.config.publicUrl)) {
		return refuse(ctx, "foreign-origin", 403, {
			code: "origin-forbidden",
			message: "An agent connection may send no Origin, or only this server's own.",
		});
	}
	let principal: AgentPrincipal;
	try {
		principal = await ctx.planner.resolvers.resolve(parseBearer(req.headers.get("authorization")));
	} catch (error) {
		if (isIdentityError(error, "unauthorized") || isIdentityError(error, "authorization-expired")) {
			return refuse(ctx, "unauthorized", 401, {
				code: "unauthorized",
				message: error.message,
				...(error.hint && { hint: error.hint }),
			});
		}
		if (isIdentityError(error, "unavailable")) return unavailable(ctx, error.retryAfterMs);
		ctx.log.error("agent credential check failed", { error });
		return failed(ctx);
	}
	try {
		if (!(await ctx.identity.admitted(principal.authorization))) {
			return refuse(ctx, "admission-refused", 403, {
				code: "not-admitted",
				message: `${principal.login} is not admitted to this Chopin server.`,
				hint: "Ask the server's operator to add you (or your organization) to ADMIT.",
			});
		}
	} catch (error) {
		if (isIdentityError(error, "unavailable")) return unavailable(ctx, error.retryAfterMs);
		ctx.log.error("agent admission check failed", { error, login: principal.login });
		return failed(ctx);
	}
	const header = req.headers.get(FEATURES_HEADER);
	const data: AgentSocketData = {
		kind: "agent",
		principal,
		requested: header === null ? null : parseFeaturesHeader(header),
	};
	// Bun answers the first offered subprotocol unless told: always name ours.
	const upgraded = c.upgrade(data, { headers: { "Sec-WebSocket-Protocol": SUBPROTOCOL } });
	if (upgraded) return upgraded;
	return jsonResponse(
		{ code: "upgrade-required", message: "This endpoint takes a WebSocket upgrade." },
		{ status: 400 },
	);
}

function unavailable(ctx: AppContext, retryAfterMs?: number): Response {
	const seconds = retryAfterMs === undefined ? undefined : Math.max(1, Math.ceil(retryAfterMs / 1000));
	return refuse(
		ctx,
		"github-unavailable",
		503,
		{
			code: "github-unavailable",
			message: "GitHub is unavailable or rate limiting Chopin.",
			hint: "Try again later.",
		},
		seconds === undefined ? undefined : { "retry-after": String(seconds) },
	);
}

function failed(ctx: AppContext): Response {
	return refuse(ctx, "admission-failed", 500, {
		code: "internal",
		message: "Something went wrong while checking the connection.",
	});
}
