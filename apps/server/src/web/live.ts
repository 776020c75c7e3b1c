// The page's live socket for one document: /ws?document=<id>, reconnecting after a drop; each (re)connect
// says "ready" so the page loads its state again and applies the events that follow.
import type { LiveEvent } from "../live/events";

export type LiveFrame = LiveEvent | { type: "ready"; documentId: string };

export type LiveState = "connecting" | "live" | "offline" | "signed-out" | "gone";

/** Close codes that end the socket for good (docs/server.md, Live socket). */
// 4403: the person lost read access; to them the document is gone, as a 404 would say.
const FINAL: Record<number, LiveState> = { 4401: "signed-out", 4403: "gone", 4404: "gone" };
const BACKOFF_MS = [1000, 2000, 5000, 10_000];

export function connectLive(
	documentId: string,
	handlers: { onFrame(frame: LiveFrame): void; onState(state: LiveState): void },
): () => void {
	let socket: WebSocket | undefined;
	let attempt = 0;
	let stopped = false;
	let retry: ReturnType<typeof setTimeout> | undefined;

	const open = () => {
		handlers.onState("connecting");
		const url = new URL(`/ws?${new URLSearchParams({ document: documentId })}`, location.href);
		url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
		const ws = new WebSocket(url);
		socket = ws;
		ws.onmessage = (event) => {
			let frame: LiveFrame;
			try {
				frame = JSON.parse(String(event.data)) as LiveFrame;
			} catch {
				return;
			}
			if (frame.type === "ready") {
				attempt = 0;
				handlers.onState("live");
			}
			handlers.onFrame(frame);
		};
		ws.onclose = (event) => {
			if (stopped || socket !== ws) return;
			const final = FINAL[event.code];
			if (final) {
				handlers.onState(final);
				return;
			}
			handlers.onState("offline");
			const wait = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]!;
			attempt += 1;
			retry = setTimeout(open, wait);
		};
	};
	open();
	return () => {
		stopped = true;
		clearTimeout(retry);
		socket?.close(1000, "page closed");
	};
}
