// What read_brief gives a run's agent: the run, the document and its plan, the brief, and what Chopin asks of
// every run of its kind (a build may push and open a pull request naming who asked; an investigation only reads).
import type { BriefResult } from "@chopin/agent-link/mcp";
import type { Build } from "./build-rows";

/** The branch a run works on: the one its machine reported, or the one the connector names runs after. */
export function branchOf(build: Pick<Build, "id" | "workspace">): string {
	return build.workspace?.branch ?? `chopin/${build.id}`;
}

export function briefResult(
	build: Build,
	document: { id: string; title: string; repository: string; source: string },
	publicUrl: string,
): BriefResult {
	const branch = branchOf(build);
	return {
		run: { id: build.id, kind: build.kind, base: build.base, branch, requestedBy: build.requestedBy },
		document: {
			id: document.id,
			title: document.title,
			url: `${publicUrl}/d/${document.id}`,
			repository: document.repository,
		},
		brief: build.brief,
		plan: document.source,
		instructions: instructions(build, branch, document.repository),
	};
}

function instructions(build: Build, branch: string, repository: string): string {
	const reporting =
		"Report each stage with report_progress as you go (the document's page shows them live), report_blocker " +
		"when something only a person can fix stops you, and end with report_result. Ask the document's Planner " +
		"with invoke_planner when the plan or the brief is unclear.";
	if (build.kind === "investigation") {
		return [
			`This is an investigation for a Chopin document of ${repository}: answer the brief from the code at commit ${build.base}; the plan is context.`,
			"It is read-only: do not change, commit or push anything, and open no pull request.",
			reporting,
			"Give your answer as report_result's summary (Markdown) with outcome succeeded, or outcome failed saying why you could not answer.",
		].join("\n\n");
	}
	return [
		`This is a build for a Chopin document of ${repository}: implement the document's plan as the brief asks, in this workspace, starting at commit ${build.base} on the branch ${branch}.`,
		`Commit your work on that branch. When it is ready, push the branch and open a pull request against ${repository} with your own tools; say in its description that @${build.requestedBy} asked for it through Chopin, and report it with report_pull_request.`,
		reporting,
		"report_result's summary says what was done (Markdown), with the branch and the last commit.",
	].join("\n\n");
}
