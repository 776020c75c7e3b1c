// A run card as Chat shows it: the status to display, its times, open questions, and its stages (nested
// by parentIds, with the count of earlier stages the client did not send) when expanded.
import type { ReactNode } from "react";
import type { RunCardView } from "../api";

type StageView = RunCardView["stages"][number];

const time = (seconds: number) =>
	new Date(seconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });

export function RunCard({ run }: { run: RunCardView }): ReactNode {
	const ids = new Set(run.stages.map((s) => s.id));
	// A stage whose parents are all unknown (not reported yet) shows at the top level until they arrive.
	const roots = run.stages.filter((s) => !(s.parentIds ?? []).some((p) => ids.has(p)));
	const childrenOf = (id: string) => run.stages.filter((s) => (s.parentIds ?? []).includes(id));
	return (
		<article className="run-card" data-run-id={run.id} data-status={run.displayStatus}>
			<header>
				<h3>{run.name}</h3>
				<span className={`badge status-${run.displayStatus}`}>{run.displayStatus}</span>
				{run.disconnected && (
					<span
						className="badge status-disconnected"
						title="Its Planner's connection dropped; the run is kept until it reconnects."
					>
						disconnected
					</span>
				)}
			</header>
			<p className="muted">
				Started {time(run.started)}
				{run.ended !== undefined && ` · ended ${time(run.ended)}`}
				{run.waiting > 0 && ` · waiting on ${run.waiting} ${run.waiting === 1 ? "question" : "questions"}`}
			</p>
			<details>
				<summary>Stages ({run.stages.length + run.earlierStages})</summary>
				{run.earlierStages > 0 && (
					<p className="muted">
						{run.earlierStages} earlier {run.earlierStages === 1 ? "stage was" : "stages were"} not sent.
					</p>
				)}
				<StageList stages={roots} childrenOf={childrenOf} seen={new Set()} />
			</details>
		</article>
	);
}

function StageList(props: {
	stages: StageView[];
	childrenOf(id: string): StageView[];
	seen: Set<string>;
}): ReactNode {
	if (props.stages.length === 0) return null;
	return (
		<ul className="stages">
			{props.stages.map((stage) => {
				// A cycle of links shows each stage once.
				if (props.seen.has(stage.id)) return null;
				const seen = new Set(props.seen).add(stage.id);
				return (
					<li key={stage.id} data-status={stage.displayStatus}>
						<span>{stage.name}</span>{" "}
						<span className={`badge status-${stage.displayStatus}`}>
							{stage.displayStatus.replace("_", " ")}
						</span>
						<StageList stages={props.childrenOf(stage.id)} childrenOf={props.childrenOf} seen={seen} />
					</li>
				);
			})}
		</ul>
	);
}
