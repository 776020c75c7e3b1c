// /ws?document=<id>: the browser's live socket for one document. It checks the same-origin rule, the
// cookie session and read access before upgrading, then sends the live hub's events as JSON, pings on
// the injected clock, and closes when the sign-in ends, read access is lost, or the document is deleted.
import type { Timer } from "@chopin/agent-link/clock";
import { optionalUser, requirePermission, type SignedInUser, signInRequired } from "../auth/guards";
import type { AppContext } from "../context";
import { documentAccess } from "../documents/access";
import { HttpError } from "../http/errors";
import type { Router } from "../http/router";
import type { Socket, SocketData } from "../http/sockets";
import type { LiveEvent } from "./events";

/** How often the server pings a page's socket; two intervals without a word from it close it. */
export const LIVE_PING_MS = 30_000;
/** How often an open page's read access is checked again (as the agent connection rechecks its Planner's). */
export const LIVE_RECHECK_MS = 5 * 60_000;
/** A page that reads slower than this much queued output is closed; it reconnects and reloads. */
export const LIVE_MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/** Close codes a page acts on (docs/server.md, Live socket). */
export const LIVE_CLOSE = {
	/** Nothing heard for two ping intervals. */
	unresponsive: 1001,
	/** The page fell too far behind; it reconnects and reloads what it shows. */
	tooSlow: 4008,
	/** The browser's sign-in ended (signed out, expired or revoked): sign in again. */
	signedOut: 4401,
	/** The person can no longer read the document's repository. */
	forbidden: 4403,
	/** The document was deleted. */
	deleted: 4404,
} as const;

/** The first frame after the upgrade: the subscription is on, so a page loads its state now. */
export interface LiveReady {
	type: "ready";
	documentId: string;
}

interface LiveSocketData extends SocketData {
	kind: "live";
	documentId: string;
	login: string;
	sessionId: string;
	/** Whose access is checked again every LIVE_RECHECK_MS, and on which repository. */
	user: SignedInUser;
	repository: string;
	/** Filled at open. */
	off?: () => void;
	timer?: Timer;
	recheck?: Timer;
	/** Whether anything (a pong, a frame) came since the last ping. */
	heard?: boolean;
	missed?: number;
}

type LiveSocket = Socket<LiveSocketData>;

export function registerLiveSocket(router: Router, ctx: AppContext): void {
	const bySession = new Map<string, Set<LiveSocket>>();
	const closeSession = (sessionId: string, reason: string) => {
		for (const ws of bySession.get(sessionId) ?? []) ws.close(LIVE_CLOSE.signedOut, reason);
	};
	ctx.sessions.onSignOut((_login, sessionId) => closeSession(sessionId, "signed out"));
	ctx.sessions.onSessionExpired((_login, sessionId) => closeSession(sessionId, "sign-in ended"));

	const send = (ws: LiveSocket, frame: LiveEvent | LiveReady) => {
		ws.send(JSON.stringify(frame));
		if (ws.getBufferedAmount() > LIVE_MAX_BUFFERED_BYTES) ws.close(LIVE_CLOSE.tooSlow, "too slow");
	};

	const schedulePing = (ws: LiveSocket) => {
		ws.data.timer = ctx.clock.setTimeout(() => {
			ws.data.missed = ws.data.heard ? 0 : (ws.data.missed ?? 0) + 1;
			ws.data.heard = false;
			if (ws.data.missed >= 2) {
				ws.close(LIVE_CLOSE.unresponsive, "unresponsive");
				return;
			}
			ws.ping();
			schedulePing(ws);
		}, LIVE_PING_MS);
	};

	// Access granted at the upgrade can be taken away on GitHub: a page that lost it stops getting events.
	// GitHub failing to answer is not a loss; the socket stays and the next check asks again.
	const scheduleRecheck = (ws: LiveSocket) => {
		ws.data.recheck = ctx.clock.setTimeout(async () => {
			try {
				await requirePermission(ctx, ws.data.user, ws.data.repository, "read");
			} catch (error) {
				const status = error instanceof HttpError ? error.status : 0;
				if (status === 401 || status === 403 || status === 404) {
					ws.close(status === 401 ? LIVE_CLOSE.signedOut : LIVE_CLOSE.forbidden, "access lost");
					return;
				}
			}
			if (ws.readyState === 1) scheduleRecheck(ws);
		}, LIVE_RECHECK_MS);
	};

	ctx.sockets.register<LiveSocketData>("live", {
		open(ws) {
			const { documentId, sessionId } = ws.data;
			const set = bySession.get(sessionId) ?? new Set<LiveSocket>();
			bySession.set(sessionId, set);
			set.add(ws);
			ws.data.heard = true;
			ws.data.off = ctx.domain.hub.subscribe(documentId, (event) => {
				send(ws, event);
				if (event.type === "document.updated" && event.change === "deleted") {
					ws.close(LIVE_CLOSE.deleted, "document deleted");
				}
			});
			send(ws, { type: "ready", documentId });
			schedulePing(ws);
			scheduleRecheck(ws);
		},
		// Pages send nothing the server acts on; any frame still shows the page is alive.
		message(ws) {
			ws.data.heard = true;
		},
		pong(ws) {
			ws.data.heard = true;
		},
		close(ws) {
			ws.data.off?.();
			ws.data.timer?.cancel();
			ws.data.recheck?.cancel();
			const set = bySession.get(ws.data.sessionId);
			set?.delete(ws);
			if (set?.size === 0) bySession.delete(ws.data.sessionId);
		},
	});

	router.get("/ws", async (c) => {
		// Refused over HTTP, before anything opens: a foreign (or missing) Origin, then the sign-in, then access.
		if (c.req.headers.get("origin") !== ctx.config.publicUrl) {
			throw new HttpError(
				403,
				"origin-forbidden",
				"This socket is only for Chopin's own pages.",
				`Open ${ctx.config.publicUrl} instead.`,
			);
		}
		const user = await optionalUser(ctx, c.req);
		if (!user) throw signInRequired();
		const id = c.url.searchParams.get("document");
		if (!id) {
			throw new HttpError(400, "invalid-request", "Name the document: /ws?document=<id>.", undefined, {
				field: "document",
			});
		}
		const { document } = await documentAccess(ctx, c.req, id, "read");
		if ((c.req.headers.get("upgrade") ?? "").toLowerCase() !== "websocket") {
			throw new HttpError(
				426,
				"upgrade-required",
				"This is a WebSocket endpoint.",
				"Connect with a WebSocket.",
			);
		}
		const data: LiveSocketData = {
			kind: "live",
			documentId: document.id,
			login: user.login,
			sessionId: user.sessionId,
			user,
			repository: document.repository,
		};
		const upgraded = c.upgrade(data);
		if (!upgraded) throw new HttpError(400, "upgrade-failed", "The WebSocket upgrade failed.");
		return upgraded;
	});
}
