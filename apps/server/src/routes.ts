// Every route of the server, one register call per domain: add yours here.
import { registerAgentRoutes } from "./agent/routes";
import { registerAuthRoutes } from "./auth/routes";
import type { AppContext } from "./context";
import { registerHealthRoutes } from "./health";
import type { Router } from "./http/router";

export function registerRoutes(router: Router, ctx: AppContext): void {
	registerHealthRoutes(router, ctx);
	registerAuthRoutes(router, ctx);
	registerAgentRoutes(router, ctx);
}
