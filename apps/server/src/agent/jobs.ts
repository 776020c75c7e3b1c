// A background job's turn: an isolated session (no own tools, no Decisions, read-only host tools), one turn
// with an optional responseFormat, its text collected, then destroy.
import type { ResponseFormat } from "@chopin/agent-link";
import type { AttachedPlanner } from "./attached";
import { StartFailed } from "./sessions";
import type { TurnOutcome, TurnSink } from "./turns";

export interface JobInput {
	prompt: string;
	instructions?: string;
	/** { type: "json", schema } asks for the turn's text to be that JSON. */
	responseFormat?: ResponseFormat;
}

export type JobResult =
	| { status: "finished"; text: string }
	| { status: "failed" | "aborted"; message: string };

class CollectingSink implements TurnSink {
	text_ = "";
	text(delta: string): void {
		this.text_ += delta;
	}
	toolStarted(): void {}
	toolFinished(): void {}
	ended(): void {}
}

export async function runJob(planner: AttachedPlanner, input: JobInput): Promise<JobResult> {
	const verdict = await planner.guard();
	if (!verdict.ok) return { status: "failed", message: verdict.message };
	let session: Awaited<ReturnType<typeof planner.startSession>>;
	try {
		session = await planner.startSession("isolated");
	} catch (error) {
		if (error instanceof StartFailed) return { status: "failed", message: error.message };
		throw error;
	}
	// Checked again before the turn, as before every start and every turn.
	const again = await planner.guard();
	if (!again.ok) {
		planner.sessions.destroy(session);
		return { status: "failed", message: again.message };
	}
	const sink = new CollectingSink();
	const outcome: TurnOutcome = await planner.runTurn(session, input, sink).done;
	planner.sessions.destroy(session);
	if (outcome.status === "finished") return { status: "finished", text: sink.text_ };
	return { status: outcome.status, message: outcome.message ?? "The job's turn was stopped." };
}
