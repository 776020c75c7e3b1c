// An MCP client (the official SDK) over stdio for tests: it starts a command as an MCP server, as an ACP agent does
// with `chopin bridge`, lists its tools and calls them.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export interface StdioMcp {
	toolNames(): Promise<string[]>;
	/** A call's text, and whether the tool answered an error. */
	call(name: string, args?: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
	close(): Promise<void>;
}

export async function connectStdioMcp(
	command: string,
	args: string[],
	env: Record<string, string>,
): Promise<StdioMcp> {
	const client = new Client({ name: "chopin-test", version: "1.0.0" });
	await client.connect(new StdioClientTransport({ command, args, env, stderr: "pipe" }));
	return {
		toolNames: async () => (await client.listTools()).tools.map((t) => t.name).sort(),
		async call(name, args = {}) {
			const result = (await client.callTool({ name, arguments: args })) as {
				isError?: boolean;
				content?: { type: string; text?: string }[];
			};
			return {
				text: (result.content ?? []).map((c) => c.text ?? "").join(""),
				isError: result.isError === true,
			};
		},
		close: () => client.close(),
	};
}
