// A run card as Chat shows it: the status to display, its times, open questions, and its stages (nested
// by parentIds, with the count of earlier stages the client did not send) when expanded.
import type { ReactNode } from "react";
import type { RunCardView } from "../api";

type StageView = RunCardView["stages"][number];

const time = (seconds: number) =>
	new Date(seconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });

export function RunCard({ run }: { run: RunCardView }): ReactNode {
	// Built once: a run may have thousands of stages (run-stage-deltas sets no count limit).
	const children = new Map<string, StageView[]>();
	for (const stage of run.stages) {
		for (const parentId of new Set(stage.parentIds ?? [])) {
			const list = children.get(parentId);
			if (list) list.push(stage);
			else children.set(parentId, [stage]);
		}
	}
	const childrenOf = (id: string) => children.get(id) ?? [];
	const roots = topLevel(run.stages, childrenOf);
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

/**
 * The stages listed at the top level, in their order: those whose parents are all unknown (not reported
 * yet, so they show here until their parent arrives), and the first stage of any cycle of links that none
 * of those reaches (one whose parent is itself, or two that name each other), so every stage shows.
 */
function topLevel(stages: StageView[], childrenOf: (id: string) => StageView[]): StageView[] {
	const ids = new Set(stages.map((s) => s.id));
	const tops = new Set(stages.filter((s) => !(s.parentIds ?? []).some((p) => ids.has(p))));
	const reached = new Set<string>();
	const reach = (stage: StageView) => {
		const queue = [stage];
		while (queue.length) {
			const next = queue.pop()!;
			if (reached.has(next.id)) continue;
			reached.add(next.id);
			queue.push(...childrenOf(next.id));
		}
	};
	tops.forEach(reach);
	for (const stage of stages) {
		if (reached.has(stage.id)) continue;
		tops.add(stage);
		reach(stage);
	}
	return stages.filter((s) => tops.has(s));
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
