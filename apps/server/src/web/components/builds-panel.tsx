// The document page's builds and investigations: the start form for writers, then one card per run, newest first,
// kept current by the page's live events. Start again on a card fills the form.
import { type ReactNode, useRef, useState } from "react";
import type { BuildView, LogPage } from "../api";
import type { BuildLog, mergeLog } from "../document-state";
import type { StartAgain } from "./build-actions";
import { BuildCard } from "./build-card";
import { BuildStart } from "./build-start";

export function BuildsPanel(props: {
	documentId: string;
	builds: BuildView[];
	logs: Record<string, BuildLog>;
	/** Push or admin on the repository: the form and the buttons. */
	canWrite: boolean;
	archived: boolean;
	/** A run the server answered with (started, stopped, resumed), or one discarded. */
	onChanged(change: { build: BuildView } | { removed: string }): void;
	onLines(
		buildId: string,
		lines: LogPage["lines"],
		options: NonNullable<Parameters<typeof mergeLog>[2]>,
	): void;
}): ReactNode {
	const { builds, canWrite } = props;
	const [prefill, setPrefill] = useState<(StartAgain & { nonce: number }) | null>(null);
	const [formOpen, setFormOpen] = useState(false);
	const nonce = useRef(0);
	const startAgain = (start: StartAgain) => {
		setFormOpen(true);
		nonce.current += 1;
		setPrefill({ ...start, nonce: nonce.current });
	};
	if (!canWrite && builds.length === 0) return null;
	return (
		<section className="builds" aria-labelledby="builds-heading">
			<h2 id="builds-heading">Builds and investigations</h2>
			{canWrite &&
				(props.archived ? (
					<p className="muted">This document is archived, so nothing can be started for it.</p>
				) : (
					<details
						className="build-start-box"
						open={formOpen}
						onToggle={(e) => setFormOpen(e.currentTarget.open)}
					>
						<summary>Start a build or investigation</summary>
						<BuildStart
							documentId={props.documentId}
							prefill={prefill}
							onStarted={(build) => props.onChanged({ build })}
						/>
					</details>
				))}
			{builds.length === 0 ? (
				<p className="muted">Nothing was built or investigated for this document yet.</p>
			) : (
				<div className="build-cards">
					{builds.map((build) => (
						<BuildCard
							key={build.id}
							build={build}
							log={props.logs[build.id]}
							canWrite={canWrite}
							onLines={props.onLines}
							onChanged={props.onChanged}
							onStartAgain={startAgain}
						/>
					))}
				</div>
			)}
		</section>
	);
}
