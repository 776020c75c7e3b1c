// The prompt a run's agent starts from: what kind of run it is, the person's brief, where to work, and how to report
// through Chopin's MCP tools. The full plan and instructions come from read_brief.
import type { RunOffer } from "@chopin/agent-link/machine";

export function runPrompt(offer: RunOffer, workspace: { path: string; branch: string }): string {
	const { document } = offer;
	const intro =
		offer.kind === "build"
			? `You are running a build for Chopin: implement the plan of the document "${document.title}" (${document.url}) in ${document.repository}.`
			: `You are running an investigation for Chopin: answer a question about ${document.repository}, in the context of the document "${document.title}" (${document.url}).`;
	const rules =
		offer.kind === "build"
			? [
					`Commit your work on the branch ${workspace.branch}. You may push that branch and open a pull request with your own tools; name @${offer.requestedBy}, who asked for this build, in the pull request.`,
				]
			: [
					"This is read-only: do not change files, commit or push (pushing is refused on this machine).",
					"Give your answer in report_result's summary.",
				];
	return [
		intro,
		"",
		`@${offer.requestedBy} wrote:`,
		offer.brief,
		"",
		`Work only in this directory: a checkout of ${offer.base} on ${offer.kind === "build" ? `the branch ${workspace.branch}` : "its own branch"}.`,
		"Chopin's MCP server `chopin` has your tools: call read_brief first (the document's plan and your instructions), report_progress as you go, report_blocker when you cannot go on without a person, report_pull_request for a pull request you open, and report_result once at the end.",
		...rules,
	].join("\n");
}
