// The tools a run's agent reports through with its run credential: read_brief, and the progress, blocker,
// pull-request and result reports, each written to the run and published live on the document's page.
import type { RunReport } from "../builds/reports";
import type { AppContext } from "../context";
import type { McpPrincipal } from "./auth";
import { json, type ToolResult } from "./results";

type Run = Extract<McpPrincipal, { kind: "run" }>;

export async function readBrief(ctx: AppContext, principal: Run): Promise<ToolResult> {
	return json(await ctx.builds.brief(principal.run.build.id));
}

export async function report(ctx: AppContext, principal: Run, runReport: RunReport): Promise<ToolResult> {
	const build = await ctx.builds.report(principal.run.build.id, runReport);
	return json({ recorded: runReport.tool.replace("report_", ""), run: build.id, status: build.status });
}
