// What a run's agent reports through /mcp: stages by name, a blocker, pull-request links and the result, written to
// the run and published live. A report after the machine said `finished` still decides what that ending shows.
import type { mcpToolInputs } from "@chopin/agent-link/mcp";
import type { z } from "zod";
import { type Build, getBuild, restatus, saveReports } from "./build-rows";
import type { BuildsCore } from "./core";
import { finalStatus } from "./statuses";

/** The most recent stages kept (a stage reported again by name is updated in place). */
export const STAGES_KEPT = 64;
/** Pull requests kept per run. */
export const PULL_REQUESTS_KEPT = 20;

type Input<K extends keyof typeof mcpToolInputs> = z.infer<z.ZodObject<(typeof mcpToolInputs)[K]>>;

export type RunReport =
	| { tool: "report_progress"; input: Input<"report_progress"> }
	| { tool: "report_blocker"; input: Input<"report_blocker"> }
	| { tool: "report_pull_request"; input: Input<"report_pull_request"> }
	| { tool: "report_result"; input: Input<"report_result"> };

function applied(
	build: Build,
	report: RunReport,
	at: number,
): Pick<Build, "stages" | "blocker" | "pullRequests" | "result"> {
	const next = {
		stages: build.stages,
		blocker: build.blocker,
		pullRequests: build.pullRequests,
		result: build.result,
	};
	switch (report.tool) {
		case "report_progress": {
			const { stage, status, detail } = report.input;
			const entry = { name: stage, status, ...(detail !== undefined && { detail }), at };
			const i = build.stages.findIndex((s) => s.name === stage);
			next.stages = i >= 0 ? build.stages.with(i, entry) : [...build.stages, entry].slice(-STAGES_KEPT);
			break;
		}
		case "report_blocker":
			next.blocker = { message: report.input.message, at };
			break;
		case "report_pull_request": {
			const { url, title } = report.input;
			const entry = { url, ...(title !== undefined && { title }), at };
			const i = build.pullRequests.findIndex((p) => p.url === url);
			next.pullRequests =
				i >= 0
					? build.pullRequests.with(i, entry)
					: [...build.pullRequests, entry].slice(-PULL_REQUESTS_KEPT);
			break;
		}
		case "report_result": {
			const { outcome, summary, branch, commit } = report.input;
			// A second result replaces the first: the agent's last word is the one shown.
			next.result = {
				outcome,
				summary,
				...(branch !== undefined && { branch }),
				...(commit !== undefined && { commit }),
				at,
			};
			break;
		}
	}
	return next;
}

/** Writes the report to the run and publishes it; returns the run as it is now. */
export function reportToRun(core: BuildsCore, buildId: string, report: RunReport): Promise<Build> {
	return core.serial(buildId, async () => {
		const { store } = core.deps;
		const build = await getBuild(store, buildId);
		if (!build) throw new Error(`run ${buildId} is gone`);
		const now = core.now();
		const next = applied(build, report, now);
		await saveReports(store, buildId, next, now);
		// Ended as `finished` or `blocked` (the machine's word, with less reported then): what is reported now decides.
		if (build.status === "finished" || build.status === "blocked") {
			const status = finalStatus("finished", {
				outcome: next.result?.outcome,
				blocked: next.blocker !== null,
			});
			if (status !== build.status) await restatus(store, buildId, build.status, status, now);
		}
		await core.publish(buildId);
		return (await getBuild(store, buildId))!;
	});
}
