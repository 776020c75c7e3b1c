// Every route of the server, one register call per domain: add yours here.
import { registerAuthRoutes } from "./auth/routes";
import type { AppContext } from "./context";
import { registerHealthRoutes } from "./health";
import type { Router } from "./http/router";
import { registerInstallRoutes } from "./install/routes";

export function registerRoutes(router: Router, ctx: AppContext): void {
	registerHealthRoutes(router, ctx);
	registerAuthRoutes(router, ctx);
	registerInstallRoutes(router, ctx);
}
