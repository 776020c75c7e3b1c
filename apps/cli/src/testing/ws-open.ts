// The CLI's own way of opening a WebSocket (the `ws` package, as process-context.ts does), for benches that drive the
// real control link outside a CLI process.
import { WebSocket } from "ws";
import type { OpenWebSocket } from "../program/context";

export const openWs: OpenWebSocket = (url, protocols, options) => new WebSocket(url, protocols, options);
