// One build or investigation on the document page, live: its status in words (a machine away, what to decide), the
// machine, base, who started it and when, stages, blocker, pull requests, result, branch, where a stop or resume
// stands, the log, and the buttons its `actions` allow (writers only).
import { type ReactNode, useEffect, useId } from "react";
import { api, type BuildView, type LogPage } from "../api";
import {
	controlSentence,
	firstLine,
	KIND_WORDS,
	machineName,
	pullRequestHref,
	STAGE_WORDS,
	STATUS_WORDS,
	shortCommit,
	statusSentence,
} from "../build-text";
import type { BuildLog as HeldLog, mergeLog } from "../document-state";
import { formatTime } from "../machine-text";
import { Markdown } from "../markdown";
import { BuildActions, type StartAgain } from "./build-actions";
import { BuildLog } from "./build-log";

export function BuildCard(props: {
	build: BuildView;
	log: HeldLog | undefined;
	canWrite: boolean;
	onLines(
		buildId: string,
		lines: LogPage["lines"],
		options: NonNullable<Parameters<typeof mergeLog>[2]>,
	): void;
	onChanged(change: { build: BuildView } | { removed: string }): void;
	onStartAgain(start: StartAgain): void;
}): ReactNode {
	const { build } = props;
	const headingId = useId();
	const sentence = statusSentence(build);
	const branch = build.workspace?.branch ?? build.result?.branch;

	// Live events carry no workspace path (only the machine's owner may see it, and events go to every reader). The
	// label is there only for the owner, so their card reads the run once per workspace to show where it works.
	const { onChanged } = props;
	const ownerMissesPath =
		build.machine.label !== undefined && build.workspace !== undefined && !build.workspace.path;
	const workspaceBranch = build.workspace?.branch;
	useEffect(() => {
		if (!ownerMissesPath || workspaceBranch === undefined) return;
		let current = true;
		api<{ build: BuildView }>("GET", `/api/builds/${encodeURIComponent(build.id)}`)
			.then((answer) => {
				if (current) onChanged(answer);
			})
			.catch(() => {
				// Only the path is missing; the card shows everything else.
			});
		return () => {
			current = false;
		};
	}, [ownerMissesPath, workspaceBranch, build.id, onChanged]);
	return (
		<article
			className="build-card card"
			aria-labelledby={headingId}
			data-build-id={build.id}
			data-status={build.displayStatus}
		>
			<header className="build-header">
				<h3 id={headingId}>
					{KIND_WORDS[build.kind]}: {firstLine(build.brief)}
				</h3>
				<span className={`badge status-${build.displayStatus}`}>{STATUS_WORDS[build.displayStatus]}</span>
			</header>
			{sentence && (
				<p
					className={`build-sentence ${build.displayStatus === "needs-decision" ? "notice decision-needed" : "muted"}`}
				>
					{sentence}
				</p>
			)}
			{build.reason && <p className="build-reason">{build.reason}</p>}
			<dl className="facts build-facts">
				<dt>Machine</dt>
				<dd>
					{machineName(build.machine)}
					{!build.machine.online && <span className="muted"> (offline)</span>}
				</dd>
				<dt>Base</dt>
				<dd>
					<code title={build.base}>{shortCommit(build.base)}</code>
				</dd>
				<dt>Started by</dt>
				<dd>
					@{build.requestedBy}, <Time ms={build.createdAt} />
				</dd>
				{build.claimedAt !== undefined && (
					<>
						<dt>Taken by its machine</dt>
						<dd>
							<Time ms={build.claimedAt} />
						</dd>
					</>
				)}
				{build.endedAt !== undefined && (
					<>
						<dt>Ended</dt>
						<dd>
							<Time ms={build.endedAt} />
						</dd>
					</>
				)}
				{branch && (
					<>
						<dt>Branch</dt>
						<dd>
							<code>{branch}</code>
						</dd>
					</>
				)}
				{build.workspace?.path && (
					<>
						<dt>Workspace</dt>
						<dd>
							<code className="path">{build.workspace.path}</code>
						</dd>
					</>
				)}
				{build.result?.commit && (
					<>
						<dt>Last commit</dt>
						<dd>
							<code title={build.result.commit}>{shortCommit(build.result.commit)}</code>
						</dd>
					</>
				)}
			</dl>
			<details className="build-brief">
				<summary>Brief</summary>
				<p className="pre-line">{build.brief}</p>
			</details>
			{build.stages.length > 0 && (
				<section aria-label="Stages">
					<h4>Stages</h4>
					<ol className="stages build-stages">
						{build.stages.map((stage) => (
							<li key={stage.name} data-status={stage.status}>
								<span>{stage.name}</span>{" "}
								<span className={`badge status-${stage.status}`}>{STAGE_WORDS[stage.status]}</span>
								{stage.detail && <span className="muted"> · {stage.detail}</span>}
							</li>
						))}
					</ol>
				</section>
			)}
			{build.blocker && (
				<p className="failure build-blocker">
					<strong>Blocked:</strong> {build.blocker.message}
				</p>
			)}
			{build.pullRequests.length > 0 && (
				<section aria-label="Pull requests">
					<h4>Pull requests</h4>
					<ul className="build-prs">
						{build.pullRequests.map((pr) => {
							const href = pullRequestHref(pr.url);
							const text = pr.title ? `${pr.title} (${pr.url})` : pr.url;
							return (
								<li key={pr.url}>
									{href ? (
										<a href={href} target="_blank" rel="noopener noreferrer">
											{text}
										</a>
									) : (
										<span>{text}</span>
									)}
								</li>
							);
						})}
					</ul>
				</section>
			)}
			{build.result && (
				<section aria-label="Result" className={`build-result result-${build.result.outcome}`}>
					<h4>
						Result: <span className={`status-${build.result.outcome}`}>{build.result.outcome}</span>
					</h4>
					<div className="build-summary">
						<Markdown source={build.result.summary} breaks />
					</div>
				</section>
			)}
			{build.control && (
				<p className="build-control" data-control={build.control.state} role="status">
					{controlSentence(build.control)}
				</p>
			)}
			<BuildLog
				build={build}
				log={props.log}
				onLines={(lines, options) => props.onLines(build.id, lines, options)}
			/>
			{props.canWrite && (
				<BuildActions build={build} onChanged={props.onChanged} onStartAgain={props.onStartAgain} />
			)}
		</article>
	);
}

function Time({ ms }: { ms: number }): ReactNode {
	return <time dateTime={new Date(ms).toISOString()}>{formatTime(ms)}</time>;
}
