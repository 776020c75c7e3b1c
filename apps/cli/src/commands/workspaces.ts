// `chopin workspaces`: only wires its subcommands (list, prune).
import { Command } from "commander";
import type { CliContext } from "../program/context";
import type { Run } from "./help";
import { type WorkspacesListOptions, workspacesListCommand } from "./workspaces/list";
import { type WorkspacesPruneOptions, workspacesPruneCommand } from "./workspaces/prune";

export interface WorkspacesRunners {
	list?: Run<WorkspacesListOptions>;
	prune?: Run<WorkspacesPruneOptions>;
}

export function workspacesCommand(ctx: CliContext, runners: WorkspacesRunners = {}): Command {
	return new Command("workspaces")
		.description(
			"The workspaces runs and sandboxed Planner backends work in (their own git dirs, under the state dir).",
		)
		.addCommand(workspacesListCommand(ctx, runners.list))
		.addCommand(workspacesPruneCommand(ctx, runners.prune));
}
