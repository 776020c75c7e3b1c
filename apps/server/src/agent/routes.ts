// The agent endpoint's routes: /api/v1/agent (only with AGENT on and HARNESS=remote; the socket kind and its
// settings come with it) and a repository writer's Reset, Stop and Resume Planner for a document.
import { AGENT_PATH, MAX_FRAME_BYTES } from "@chopin/agent-link";
import { requirePermission, requireUser } from "../auth/guards";
import type { AppContext } from "../context";
import { HttpError } from "../http/errors";
import { jsonResponse } from "../http/responses";
import type { RouteContext, Router } from "../http/router";
import { type AgentSocketData, agentEndpointEnabled, handleAgentUpgrade } from "./upgrade";

export function registerAgentRoutes(router: Router, ctx: AppContext): void {
	if (agentEndpointEnabled(ctx)) {
		// A route test may build a second router on one context: the socket kind is the context's, once.
		if (!ctx.sockets.has("agent"))
			ctx.sockets.register<AgentSocketData>("agent", ctx.planner.socketHandlers());
		// Bun's settings are server-wide: its own idle timeout and pings are off, since the agent
		// connection runs its own (spec: Pings); other socket kinds must run theirs too. Bun reads frames
		// up to twice the 2 MiB limit so the link can answer one over it with error message-too-large
		// before its 1009 (spec: Closing); past that Bun closes with 1009 unanswered, unread.
		Object.assign(ctx.sockets.settings, {
			idleTimeout: 0,
			sendPings: false,
			maxPayloadLength: 2 * MAX_FRAME_BYTES,
		});
		router.get(AGENT_PATH, (c) => handleAgentUpgrade(c, ctx));
	}
	ctx.onStop(() => ctx.planner.stop());

	/** The signed-in repository writer and the document. */
	const writer = async (c: RouteContext) => {
		const user = await requireUser(ctx, c.req);
		const document = await ctx.domain.documents.find(c.params.id!);
		if (!document)
			throw new HttpError(404, "document-not-found", "No such document exists, or it was deleted.");
		await requirePermission(ctx, user, document.repository, "write");
		return { user, document };
	};

	router.post("/api/documents/:id/planner/reset", async (c) => {
		const { document } = await writer(c);
		return jsonResponse({ reset: ctx.planner.reset(document.id) });
	});

	for (const action of ["stop", "resume"] as const) {
		router.post(`/api/documents/:id/planner/${action}`, async (c) => {
			const { user, document } = await writer(c);
			const pressed = ctx.planner.control(document.id, action, user.login);
			if (!pressed) {
				throw new HttpError(
					409,
					"planner-not-attached",
					"No Planner is attached to this document.",
					"Connect an agent client to the document first.",
				);
			}
			return jsonResponse(pressed, { status: 202 });
		});
	}
}
