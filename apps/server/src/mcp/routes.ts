// Chopin's MCP endpoint, POST /mcp (Streamable HTTP through the official SDK, stateless: a new server and transport
// per request). It works whether AGENT is on or off. A long call (invoke_planner waits for a Planner's turn) is never
// cut by Bun's idle timeout. See docs/mcp.md.
import { MCP_PATH } from "@chopin/agent-link/mcp";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { AppContext } from "../context";
import type { Router } from "../http/router";
import { authenticate } from "./auth";
import { mcpServerFor } from "./server";

export function registerMcpRoutes(router: Router, ctx: AppContext): void {
	router.post(MCP_PATH, async (c) => {
		const principal = await authenticate(ctx, c.req);
		// The answer may wait minutes for a Planner's reply: this request has no idle timeout.
		c.server?.timeout(c.req, 0);
		const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
		const server = mcpServerFor(ctx, principal);
		await server.connect(transport);
		return transport.handleRequest(c.req);
	});
}
