// One MCP server per /mcp request (stateless, as the SDK's web-standard transport wants): the tools the caller's
// credential may use, their JSON Schemas from the shared zod shapes, and every call validated here, so a bad
// argument is refused in the same { code, message } shape as any other refusal.
import {
	MCP_SERVER_NAME,
	type McpToolName,
	mcpToolDescriptions,
	mcpToolInputs,
	RUN_TOOLS,
} from "@chopin/agent-link/mcp";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { RunReport } from "../builds/reports";
import type { AppContext } from "../context";
import { DomainError } from "../domain-error";
import type { McpPrincipal } from "./auth";
import { invokePlanner } from "./invoke-tool";
import { refusal, type ToolResult } from "./results";
import { readBrief, report } from "./run-tools";

const schemas = Object.fromEntries(
	Object.entries(mcpToolInputs).map(([name, shape]) => [name, z.strictObject(shape)]),
) as { [K in McpToolName]: z.ZodObject<(typeof mcpToolInputs)[K]> };

/** The tools a credential may use: a run's sees its five and invoke_planner, an account invoke_planner. */
export function toolsFor(principal: McpPrincipal): McpToolName[] {
	return principal.kind === "run" ? [...RUN_TOOLS, "invoke_planner"] : ["invoke_planner"];
}

function inputSchema(name: McpToolName) {
	const { $schema: _ignored, ...schema } = z.toJSONSchema(schemas[name], { io: "input" }) as Record<
		string,
		unknown
	>;
	return { ...schema, type: "object" as const };
}

export function mcpServerFor(ctx: AppContext, principal: McpPrincipal): Server {
	const server = new Server({ name: MCP_SERVER_NAME, version: ctx.version }, { capabilities: { tools: {} } });
	const allowed = new Set(toolsFor(principal));
	server.setRequestHandler(ListToolsRequestSchema, async () => ({
		tools: [...allowed].map((name) => ({
			name,
			description: mcpToolDescriptions[name],
			inputSchema: inputSchema(name),
		})),
	}));
	server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<ToolResult> => {
		const name = request.params.name as McpToolName;
		if (!allowed.has(name)) {
			return refusal(
				"unknown-tool",
				`There is no tool ${JSON.stringify(request.params.name.slice(0, 100))} for this credential.`,
				principal.kind === "account"
					? "An account's token may call invoke_planner; the run tools need a run's credential."
					: undefined,
			);
		}
		const parsed = schemas[name].safeParse(request.params.arguments ?? {});
		if (!parsed.success) {
			const issue = parsed.error.issues[0];
			const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
			return refusal(
				"invalid-arguments",
				`Invalid arguments for ${name}: ${where}${issue?.message ?? "invalid"}.`,
			);
		}
		try {
			return await call(ctx, principal, name, parsed.data, extra.signal);
		} catch (error) {
			// A domain refusal keeps its code; anything else is logged, and the agent reads one sentence.
			if (error instanceof DomainError) return refusal(error.code, error.message, error.hint);
			ctx.log.error("mcp tool failed", { tool: name, error });
			return refusal(
				"internal",
				"Something went wrong on the server.",
				"Try again; if it keeps happening, tell the server's operator.",
			);
		}
	});
	return server;
}

async function call(
	ctx: AppContext,
	principal: McpPrincipal,
	name: McpToolName,
	input: unknown,
	signal: AbortSignal,
): Promise<ToolResult> {
	if (name === "invoke_planner") {
		return invokePlanner(ctx, principal, input as z.infer<(typeof schemas)["invoke_planner"]>, signal);
	}
	if (principal.kind !== "run")
		return refusal("unknown-tool", `There is no tool ${name} for this credential.`);
	if (name === "read_brief") return readBrief(ctx, principal);
	// The name and the input were checked together against the tool's schema above.
	return report(ctx, principal, { tool: name, input } as RunReport);
}
