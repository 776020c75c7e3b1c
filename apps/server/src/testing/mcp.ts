// The official MCP SDK client against a real server's /mcp, for tests: connect with a bearer, call a tool and read
// its text (or its refusal's JSON).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export interface McpTestClient {
	client: Client;
	/** The tool's text; throws when the call is refused (isError). */
	call(name: string, args?: Record<string, unknown>): Promise<string>;
	/** The refusal's { code, message, hint? }; throws when the call succeeds. */
	refused(
		name: string,
		args?: Record<string, unknown>,
	): Promise<{ code: string; message: string; hint?: string }>;
	close(): Promise<void>;
}

export async function connectMcp(serverUrl: string, token: string): Promise<McpTestClient> {
	const client = new Client({ name: "chopin-test", version: "0.0.0" });
	const transport = new StreamableHTTPClientTransport(new URL("/mcp", serverUrl), {
		requestInit: { headers: { authorization: `Bearer ${token}` } },
	});
	await client.connect(transport);
	const raw = async (name: string, args: Record<string, unknown>) => {
		const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
		const content = result.content as { type: string; text: string }[];
		return { isError: result.isError === true, text: content.map((c) => c.text).join("") };
	};
	return {
		client,
		async call(name, args = {}) {
			const { isError, text } = await raw(name, args);
			if (isError) throw new Error(`${name} was refused: ${text}`);
			return text;
		},
		async refused(name, args = {}) {
			const { isError, text } = await raw(name, args);
			if (!isError) throw new Error(`${name} answered ${text}`);
			return JSON.parse(text) as { code: string; message: string; hint?: string };
		},
		close: () => client.close(),
	};
}

/** A raw POST to /mcp (an initialize request unless a body is given), to read a refusal's status and body. */
export async function postMcp(
	serverUrl: string,
	headers: Record<string, string> = {},
	body?: string,
): Promise<Response> {
	return fetch(new URL("/mcp", serverUrl), {
		method: "POST",
		headers: {
			"content-type": "application/json",
			accept: "application/json, text/event-stream",
			...headers,
		},
		body:
			body ??
			JSON.stringify({
				jsonrpc: "2.0",
				id: 1,
				method: "initialize",
				params: {
					protocolVersion: "2025-06-18",
					capabilities: {},
					clientInfo: { name: "raw", version: "0" },
				},
			}),
	});
}
