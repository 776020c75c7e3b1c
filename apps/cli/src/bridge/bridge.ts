// `chopin bridge`: Chopin's MCP tools over stdio for an ACP agent that cannot reach an HTTP MCP server. It serves
// MCP on stdin/stdout and passes every tool list and call on to the server's /mcp with the run's credential.
import { Writable } from "node:stream";
import { MCP_PATH, MCP_SERVER_NAME } from "@chopin/agent-link/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/** A call may wait on the Planner (invoke_planner) far longer than the SDK's default minute. */
export const BRIDGE_CALL_TIMEOUT_MS = 30 * 60_000;

export interface BridgeOptions {
	/** The server's origin. */
	server: string;
	/** The run's credential. */
	token: string;
	version: string;
	input: NodeJS.ReadableStream;
	/** Writes one serialized MCP message to the agent. */
	write(text: string): void;
	fetch?: typeof fetch;
	/** Why the bridge could not do something, for its stderr (never the credential). */
	warn(text: string): void;
}

/** Serves until the agent closes our stdin. */
export async function runBridge(options: BridgeOptions): Promise<void> {
	let upstream: Client | undefined;
	/** The server's /mcp, connected on first use and again after a failure (the server may restart meanwhile). */
	const connected = async (): Promise<Client> => {
		if (upstream) return upstream;
		const client = new Client({ name: "chopin-bridge", version: options.version });
		const url = new URL(MCP_PATH, options.server);
		await client.connect(
			new StreamableHTTPClientTransport(url, {
				requestInit: { headers: { authorization: `Bearer ${options.token}` } },
				...(options.fetch && { fetch: options.fetch }),
			}),
		);
		upstream = client;
		return client;
	};
	const forget = (error: unknown) => {
		void upstream?.close().catch(() => {});
		upstream = undefined;
		options.warn(`chopin bridge: the Chopin server did not answer: ${(error as Error).message}`);
	};

	const server = new Server(
		{ name: MCP_SERVER_NAME, version: options.version },
		{ capabilities: { tools: {} } },
	);
	server.setRequestHandler(ListToolsRequestSchema, async (request) => {
		try {
			return await (await connected()).listTools(request.params);
		} catch (error) {
			forget(error);
			throw error;
		}
	});
	server.setRequestHandler(CallToolRequestSchema, async (request) => {
		try {
			return await (await connected()).callTool(request.params, undefined, {
				timeout: BRIDGE_CALL_TIMEOUT_MS,
			});
		} catch (error) {
			forget(error);
			// A tool's failure is the agent's to read, as the server would say it: a result, not a protocol error.
			const message = `Chopin could not be reached: ${(error as Error).message}`;
			return {
				isError: true,
				content: [{ type: "text" as const, text: JSON.stringify({ code: "chopin-unreachable", message }) }],
			};
		}
	});

	const output = new Writable({
		write(chunk, _encoding, done) {
			options.write(String(chunk));
			done();
		},
	});
	const ended = new Promise<void>((resolve) => {
		options.input.once("end", resolve);
		options.input.once("close", resolve);
	});
	await server.connect(new StdioServerTransport(options.input as never, output));
	await ended;
	await server.close();
	await upstream?.close().catch(() => {});
}
