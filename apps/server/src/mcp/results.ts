// What a /mcp tool call answers: text, or a refusal as an isError result whose text is the JSON of
// mcpToolErrorSchema ({ code, message, hint? }), so an agent reads a stable code and one sentence.
import type { McpToolError } from "@chopin/agent-link/mcp";

export interface ToolResult {
	[key: string]: unknown;
	content: { type: "text"; text: string }[];
	isError?: boolean;
}

export function text(value: string): ToolResult {
	return { content: [{ type: "text", text: value }] };
}

export function json(value: unknown): ToolResult {
	return text(JSON.stringify(value));
}

export function refusal(code: string, message: string, hint?: string): ToolResult {
	const error: McpToolError = { code, message, ...(hint && { hint }) };
	return { content: [{ type: "text", text: JSON.stringify(error) }], isError: true };
}
