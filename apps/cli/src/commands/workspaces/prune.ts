// `chopin workspaces prune [--older-than DURATION] [--dry-run]`: removes the workspaces of runs that ended longer ago
// than the cutoff (7 days by default) with their keep refs; never a live run's, never a Planner's.
import { Command } from "commander";
import { z } from "zod";
import type { CliContext } from "../../program/context";
import { CliError } from "../../program/errors";
import { parseOptions, viaCliError } from "../../program/options";
import { DEFAULT_PRUNE_AGE_MS, formatDuration, parseDuration } from "../../workspaces/prune-age";
import { examples, type Run } from "../help";

export const workspacesPruneOptionsSchema = z.strictObject({
	olderThan: viaCliError((text) => {
		const ms = parseDuration(text);
		if (ms === undefined) {
			throw new CliError(
				"option-invalid",
				`--older-than ${JSON.stringify(text)} is not a duration.`,
				"Give a number and a unit: 30m, 12h, 7d or 2w (or 0 for every ended run).",
			);
		}
		return ms;
	}),
	dryRun: z.boolean(),
});
export type WorkspacesPruneOptions = z.infer<typeof workspacesPruneOptionsSchema>;

export function workspacesPruneCommand(
	ctx: CliContext,
	run: Run<WorkspacesPruneOptions> = runWorkspacesPrune,
): Command {
	const command = new Command("prune");
	return command
		.description(
			"Remove the workspaces of runs that ended long enough ago, with their keep refs (never a live run's or a Planner's).",
		)
		.option(
			"--older-than <duration>",
			"only runs that ended at least this long ago: 30m, 12h, 7d, 2w",
			formatDuration(DEFAULT_PRUNE_AGE_MS),
		)
		.option("--dry-run", "say what would be removed, remove nothing", false)
		.addHelpText(
			"after",
			examples([
				["Remove run workspaces that ended over a week ago", "chopin workspaces prune"],
				["See what a day's cutoff would remove", "chopin workspaces prune --older-than 1d --dry-run"],
				["Remove every ended run's workspace", "chopin workspaces prune --older-than 0"],
			]),
		)
		.action(async () =>
			run(parseOptions(workspacesPruneOptionsSchema, command.opts(), "workspaces prune"), ctx),
		);
}

export async function runWorkspacesPrune(options: WorkspacesPruneOptions, ctx: CliContext): Promise<void> {
	const [{ pruneRuns }, { CheckoutGate }] = await Promise.all([
		import("../../workspaces/prune"),
		import("../../workspaces/gate"),
	]);
	const outcome = await pruneRuns({ spawn: ctx.spawn, env: ctx.env }, new CheckoutGate(), {
		stateDir: ctx.paths.stateDir,
		now: ctx.clock.now(),
		olderThanMs: options.olderThan,
		dryRun: options.dryRun,
	});
	const verb = options.dryRun ? "Would remove" : "Removed";
	for (const { record, keepRef } of outcome.removed) {
		const ended = record.endedAt === undefined ? "" : `, ended ${new Date(record.endedAt).toISOString()}`;
		ctx.stdout.write(`${verb} ${record.id} (${record.kind} ${record.status}${ended}): ${record.workspace}\n`);
		if (keepRef && keepRef !== "removed") {
			ctx.stderr.write(
				`warning: could not delete ${record.id}'s keep ref in ${record.checkout}: ${keepRef.problem}.\n`,
			);
		}
	}
	const cutoff = formatDuration(options.olderThan);
	const kept =
		outcome.kept.length === 0
			? ""
			: `; kept ${outcome.kept.length} (not ended, ended within ${cutoff}, or unreadable)`;
	if (outcome.removed.length === 0)
		ctx.stderr.write(`No run ended more than ${cutoff} ago: nothing to remove${kept}.\n`);
	else
		ctx.stderr.write(
			`${verb} ${outcome.removed.length} run workspace${outcome.removed.length === 1 ? "" : "s"}${kept}.\n`,
		);
}
