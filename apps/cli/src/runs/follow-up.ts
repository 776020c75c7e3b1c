// When a run ends, the connector tells the document's Planner through /mcp's invoke_planner with `as: "system"`
// and the run's credential (the spec's automatic follow-up). A refusal (no Planner attached) is only logged.
import { MCP_PATH } from "@chopin/agent-link/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** How long the follow-up waits for the Planner's turn to end. */
export const FOLLOW_UP_TIMEOUT_MS = 10 * 60_000;

export interface FollowUpResult {
	ok: boolean;
	/** The Planner's reply, or the refusal's text. */
	text: string;
}

export async function sendFollowUp(options: {
	server: string;
	token: string;
	message: string;
	version: string;
	fetch?: typeof fetch;
	signal?: AbortSignal;
}): Promise<FollowUpResult> {
	const client = new Client({ name: "chopin-connector", version: options.version });
	await client.connect(
		new StreamableHTTPClientTransport(new URL(MCP_PATH, options.server), {
			requestInit: { headers: { authorization: `Bearer ${options.token}` } },
			...(options.fetch && { fetch: options.fetch }),
		}),
	);
	try {
		const result = (await client.callTool(
			{ name: "invoke_planner", arguments: { message: options.message, as: "system" } },
			undefined,
			{ timeout: FOLLOW_UP_TIMEOUT_MS, ...(options.signal && { signal: options.signal }) },
		)) as { isError?: boolean; content?: { type: string; text?: string }[] };
		const text = (result.content ?? []).map((c) => c.text ?? "").join("");
		return { ok: !result.isError, text };
	} finally {
		await client.close().catch(() => {});
	}
}
