// `chopin workspaces list [--json]`: every run's workspace (from its run.json) and every Planner document's folder
// under the state dir, with their paths; read from files only, so it works with or without a daemon.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../../program/context";
import { parseOptions } from "../../program/options";
import { examples, type Run } from "../help";

export const workspacesListOptionsSchema = z.strictObject({ json: z.boolean() });
export type WorkspacesListOptions = z.infer<typeof workspacesListOptionsSchema>;

/** --json's shape: every key always present (null when unknown). */
export const workspacesReportSchema = z.strictObject({
	stateDir: z.string(),
	runs: z.array(
		z.strictObject({
			id: z.string(),
			/** The workspace's folder (the run's folder when its record cannot be read). */
			path: z.string(),
			/** Whether the workspace folder is there. */
			present: z.boolean(),
			problem: z.string().nullable(),
			kind: z.enum(["build", "investigation"]).nullable(),
			status: z.string().nullable(),
			document: z.strictObject({ id: z.string(), url: z.string() }).nullable(),
			repository: z.string().nullable(),
			checkout: z.string().nullable(),
			branch: z.string().nullable(),
			base: z.string().nullable(),
			createdAt: z.string().nullable(),
			endedAt: z.string().nullable(),
		}),
	),
	planners: z.array(
		z.strictObject({
			document: z.string(),
			repository: z.string(),
			path: z.string(),
			kind: z.enum(["missing", "empty", "workspace", "linked-worktree", "other"]),
			/** `refs/heads/<branch>` or a commit id, from the workspace's HEAD file. */
			head: z.string().nullable(),
		}),
	),
});
export type WorkspacesReport = z.infer<typeof workspacesReportSchema>;

export function workspacesListCommand(
	ctx: CliContext,
	run: Run<WorkspacesListOptions> = runWorkspacesList,
): Command {
	const command = new Command("list");
	return command
		.description("List the workspaces of runs and Planner backends, with their paths and state.")
		.option("--json", "print them as JSON on stdout and nothing else there", false)
		.addHelpText(
			"after",
			examples([
				["See every workspace and where it is", "chopin workspaces list"],
				[
					"The paths of ended runs' workspaces",
					"chopin workspaces list --json | jq -r '.runs[] | select(.endedAt) | .path'",
				],
			]),
		)
		.action(async () =>
			run(parseOptions(workspacesListOptionsSchema, command.opts(), "workspaces list"), ctx),
		);
}

export async function runWorkspacesList(options: WorkspacesListOptions, ctx: CliContext): Promise<void> {
	const report = await workspacesReport(ctx.paths.stateDir);
	if (options.json) {
		ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
		return;
	}
	if (report.runs.length === 0 && report.planners.length === 0) {
		ctx.stderr.write(`No workspaces in ${report.stateDir}.\n`);
		return;
	}
	const lines: string[] = [];
	if (report.runs.length > 0) lines.push(`Run workspaces (${report.runs.length}):`);
	for (const run of report.runs) {
		if (run.problem) lines.push(`  ${run.id}  cannot be read: ${run.problem}`);
		else {
			const when = run.endedAt ? `, ended ${run.endedAt}` : `, since ${run.createdAt}`;
			lines.push(`  ${run.id}  ${run.kind} ${run.status}${when}  ${run.repository}  on ${run.branch}`);
		}
		lines.push(`    ${run.path}${run.present || run.problem ? "" : " (gone)"}`);
	}
	if (report.planners.length > 0) lines.push(`Planner workspaces (${report.planners.length}):`);
	for (const planner of report.planners) {
		const head = planner.head
			? planner.head.startsWith("refs/heads/")
				? ` on ${planner.head.slice("refs/heads/".length)}`
				: ` at ${planner.head.slice(0, 12)}`
			: "";
		lines.push(`  ${planner.document}  ${planner.repository}  ${kindText(planner.kind)}${head}`);
		lines.push(`    ${planner.path}`);
	}
	ctx.stdout.write(`${lines.join("\n")}\n`);
}

/** The report --json prints, from the state dir's files. */
export async function workspacesReport(stateDir: string): Promise<WorkspacesReport> {
	const { listWorkspaces } = await import("../../workspaces/list");
	const { runs, planners } = listWorkspaces(stateDir);
	const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
	return {
		stateDir,
		runs: runs.map(({ id, dir, record, present, problem }) => ({
			id,
			path: record?.workspace ?? dir,
			present,
			problem: problem ?? null,
			kind: record?.kind ?? null,
			status: record?.status ?? null,
			document: record?.document ?? null,
			repository: record?.repository ?? null,
			checkout: record?.checkout ?? null,
			branch: record?.branch ?? null,
			base: record?.base ?? null,
			createdAt: iso(record?.createdAt),
			endedAt: iso(record?.endedAt),
		})),
		planners: planners.map((p) => ({ ...p, head: p.head ?? null })),
	};
}

function kindText(kind: WorkspacesReport["planners"][number]["kind"]): string {
	switch (kind) {
		case "workspace":
			return "workspace";
		case "linked-worktree":
			return "linked worktree (made by the backend, or by an earlier chopin)";
		case "empty":
			return "empty";
		case "missing":
			return "missing";
		case "other":
			return "not a workspace (left alone)";
	}
}
