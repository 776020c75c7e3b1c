// Every route of the server, one register call per domain: add yours here.
import { registerModelRoutes } from "./agent/model-route";
import { registerPlannerStatusRoute } from "./agent/planner-status-route";
import { registerAgentRoutes } from "./agent/routes";
import { registerAuthRoutes } from "./auth/routes";
import { registerBuildRoutes } from "./builds/routes";
import { registerChatRoutes } from "./chat/routes";
import type { AppContext } from "./context";
import { registerDecisionRoutes } from "./decisions/routes";
import { registerDocumentRoutes } from "./documents/routes";
import { registerHealthRoutes } from "./health";
import type { Router } from "./http/router";
import { registerImageRoutes } from "./images/routes";
import { registerInstallRoutes } from "./install/routes";
import { registerLiveSocket } from "./live/socket";
import { registerMachineRoutes } from "./machines/routes";
import { registerMcpRoutes } from "./mcp/routes";
import { registerRunRoutes } from "./runs/routes";
import { registerPageRoutes } from "./web/routes";

export function registerRoutes(router: Router, ctx: AppContext): void {
	registerHealthRoutes(router, ctx);
	registerAuthRoutes(router, ctx);
	registerMachineRoutes(router, ctx);
	registerDocumentRoutes(router, ctx);
	registerImageRoutes(router, ctx);
	registerChatRoutes(router, ctx);
	registerDecisionRoutes(router, ctx);
	registerRunRoutes(router, ctx);
	registerBuildRoutes(router, ctx);
	registerPlannerStatusRoute(router, ctx);
	registerModelRoutes(router, ctx);
	registerLiveSocket(router, ctx);
	registerPageRoutes(router, ctx);
	registerInstallRoutes(router, ctx);
	registerAgentRoutes(router, ctx);
	registerMcpRoutes(router, ctx);
}
