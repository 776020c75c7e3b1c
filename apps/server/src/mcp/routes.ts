// Chopin's MCP endpoint, POST /mcp (Streamable HTTP through the official SDK, stateless: a new server and transport
// per request). It works whether AGENT is on or off. A long call (invoke_planner waits for a Planner's turn) is never
// cut by Bun's idle timeout. The body is read here first, within MAX_BODY_BYTES and MAX_JSON_DEPTH. See docs/mcp.md.
import { exceedsJsonDepth } from "@chopin/agent-link/json-depth";
import { MCP_PATH } from "@chopin/agent-link/mcp";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { AppContext } from "../context";
import { isJsonContentType, jsonTooDeep } from "../http/body";
import type { RouteContext, Router } from "../http/router";
import { authenticate } from "./auth";
import { mcpServerFor } from "./server";

export function registerMcpRoutes(router: Router, ctx: AppContext): void {
	router.post(MCP_PATH, async (c) => {
		const principal = await authenticate(ctx, c.req);
		// The answer may wait minutes for a Planner's reply: this request has no idle timeout.
		c.server?.timeout(c.req, 0);
		// Checked before an MCP server is built for it: a refused body costs no more than reading it.
		const req = await checkedBody(c);
		const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
		const server = mcpServerFor(ctx, principal);
		await server.connect(transport);
		return transport.handleRequest(req);
	});
}

/**
 * The request with its body read within MAX_BODY_BYTES (413 body-too-large) and refused when it nests
 * deeper than MAX_JSON_DEPTH (400 json-too-deep), before the SDK parses it. Anything else (not JSON,
 * not JSON-RPC) the SDK answers as before, from the same bytes.
 */
async function checkedBody(c: RouteContext): Promise<Request> {
	if (!isJsonContentType(c.req.headers.get("content-type"))) return c.req;
	const bytes = await c.bytes();
	if (exceedsJsonDepth(new TextDecoder().decode(bytes))) throw jsonTooDeep();
	// readBytes builds its own ArrayBuffer-backed array.
	return new Request(c.req.url, {
		method: c.req.method,
		headers: c.req.headers,
		body: bytes as Uint8Array<ArrayBuffer>,
	});
}
