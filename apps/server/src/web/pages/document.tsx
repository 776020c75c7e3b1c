// The document page /d/<id>: the rendered document with its Decisions after their blocks, the Planner,
// run cards and Chat, all kept current by the live socket without reloading.
import { type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { positionCards } from "../../decisions/card-positions";
import type { ChatModelState, LiveEvent } from "../../live/events";
import {
	ApiError,
	api,
	type BuildView,
	type DecisionView,
	type DocumentPayload,
	describeError,
	type Me,
	type MessageView,
	type PlannerStatus,
	type RunCardView,
} from "../api";
import { BuildsPanel } from "../components/builds-panel";
import { ChatPanel } from "../components/chat";
import { DecisionCard } from "../components/decision-card";
import { MachineChooser } from "../components/machine-chooser";
import { PlannerBar } from "../components/planner-bar";
import { RunCard } from "../components/run-card";
import { SourceEditor } from "../components/source-editor";
import { applyEvent, carryBuildLogs, type DocumentState, withLogLines } from "../document-state";
import { connectLive, type LiveState } from "../live";
import { linkDefinitions, Markdown } from "../markdown";

const LIVE_LABELS: Record<LiveState, string> = {
	connecting: "Connecting…",
	live: "Live",
	offline: "Offline: reconnecting…",
	"signed-out": "Signed out: sign in again to see changes",
	gone: "This document was deleted",
};

async function loadState(id: string): Promise<DocumentState> {
	const base = `/api/documents/${id}`;
	const [payload, messages, decisions, runs, planner, builds, model] = await Promise.all([
		api<DocumentPayload>("GET", base),
		api<{ messages: MessageView[]; more: boolean }>("GET", `${base}/messages?limit=200`),
		api<{ decisions: DecisionView[] }>("GET", `${base}/decisions`),
		api<{ runs: RunCardView[] }>("GET", `${base}/runs`),
		api<{ planner: PlannerStatus }>("GET", `${base}/planner`),
		api<{ builds: BuildView[] }>("GET", `${base}/builds`),
		api<ChatModelState>("GET", `${base}/model`),
	]);
	return {
		payload,
		messages: messages.messages,
		moreMessages: messages.more,
		decisions: decisions.decisions,
		runs: runs.runs,
		builds: builds.builds,
		buildLogs: {},
		planner: planner.planner,
		model,
		stale: false,
		deleted: false,
	};
}

export function DocumentPage(props: { me: Me; id: string }): ReactNode {
	const { id } = props;
	const [state, setState] = useState<DocumentState | null>(null);
	const [live, setLive] = useState<LiveState>("connecting");
	const [error, setError] = useState<string | null>(null);
	/** Events that arrive while the state loads, applied on top of it once it is in. */
	const pending = useRef<LiveEvent[] | null>(null);
	const loads = useRef(0);
	const loaded = useRef(false);

	const load = useCallback(async () => {
		const mine = ++loads.current;
		pending.current = [];
		try {
			let next = await loadState(id);
			if (mine !== loads.current) return;
			for (const event of pending.current ?? []) next = applyEvent(next, event);
			pending.current = null;
			loaded.current = true;
			// Log lines are not part of the load: those the page held stay (docs/server.md, Pages).
			setState((previous) => (previous ? carryBuildLogs(previous, next) : next));
			setError(null);
		} catch (e) {
			if (mine !== loads.current) return;
			pending.current = null;
			setError(
				e instanceof ApiError && e.status === 404
					? "There is no such document, or you cannot see it."
					: describeError(e),
			);
		}
	}, [id]);

	useEffect(
		() =>
			connectLive(id, {
				onFrame(frame) {
					if (frame.type === "ready") {
						load();
						return;
					}
					if (pending.current) pending.current.push(frame);
					else setState((s) => (s ? applyEvent(s, frame) : s));
				},
				onState(next) {
					setLive(next);
					// Without the socket the page still shows what there is.
					if (next === "offline" && !loaded.current && pending.current === null) load();
				},
			}),
		[id, load],
	);

	const onBuildChanged = useCallback(
		(change: { build: BuildView } | { removed: string }) =>
			setState((s) =>
				s
					? applyEvent(s, {
							type: "builds.updated",
							documentId: id,
							builds: "build" in change ? [change.build] : [],
							removed: "removed" in change ? [change.removed] : [],
						})
					: s,
			),
		[id],
	);
	const onBuildLines = useCallback(
		(
			buildId: string,
			lines: Parameters<typeof withLogLines>[2],
			options: Parameters<typeof withLogLines>[3],
		) => setState((s) => (s ? withLogLines(s, buildId, lines, options) : s)),
		[],
	);

	// The source changed (new blocks and digests) or a streamed delta was missed: load again.
	const stale = state?.stale ?? false;
	useEffect(() => {
		if (stale) load();
	}, [stale, load]);

	if (error && !state) return <p role="alert">{error}</p>;
	if (!state) return <p aria-busy="true">Loading…</p>;

	const { document, permission } = state.payload;
	const canWrite = permission === "write" || permission === "admin";
	const onPosted = (message: MessageView) =>
		setState((s) => (s ? applyEvent(s, { type: "message.created", documentId: id, message }) : s));
	// A Retry the server took: the failed attempt leaves at once (its message.deleted event follows).
	const onRetried = (messageId: string) =>
		setState((s) => (s ? applyEvent(s, { type: "message.deleted", documentId: id, messageId }) : s));
	// Messages the page loaded besides its first page (a thread opened): kept with the rest, live events update them.
	const onLoaded = (messages: MessageView[]) =>
		setState((s) =>
			s
				? messages.reduce(
						(next, message) => applyEvent(next, { type: "message.updated", documentId: id, message }),
						s,
					)
				: s,
		);
	const onOlder = async () => {
		// The main Chat's oldest message is the cursor: a thread's messages are paged with their thread.
		const first = state.messages.find((m) => !m.threadRoot);
		if (!first) return;
		const page = await api<{ messages: MessageView[]; more: boolean }>(
			"GET",
			`/api/documents/${id}/messages?${new URLSearchParams({ before: String(first.seq), limit: "200" })}`,
		);
		setState((s) => {
			if (!s) return s;
			const known = new Set(s.messages.map((m) => m.id));
			return {
				...s,
				messages: [...page.messages.filter((m) => !known.has(m.id)), ...s.messages],
				moreMessages: page.more,
			};
		});
	};

	return (
		<div className="document-layout">
			<section className="document-main" aria-label="Document">
				<DocumentHeader state={state} canWrite={canWrite} live={live} />
				{error && <p role="alert">{error}</p>}
				<PlannerBar documentId={id} planner={state.planner} canWrite={canWrite} />
				{!state.deleted && (
					<MachineChooser
						documentId={id}
						repository={document.repository}
						canWrite={canWrite && !document.archived}
						plannerState={state.planner.state}
					/>
				)}
				{!state.deleted && (
					<BuildsPanel
						documentId={id}
						builds={state.builds}
						logs={state.buildLogs}
						canWrite={canWrite}
						archived={document.archived}
						onChanged={onBuildChanged}
						onLines={onBuildLines}
					/>
				)}
				{state.deleted ? (
					<p role="alert">This document was deleted.</p>
				) : (
					<>
						{canWrite && !document.archived && <SourceEditor payload={state.payload} />}
						<DocumentBody state={state} />
					</>
				)}
			</section>
			<aside className="document-side">
				{state.runs.length > 0 && (
					<section className="runs" aria-label="Runs">
						<h2>Runs</h2>
						{state.runs.map((run) => (
							<RunCard key={run.id} run={run} />
						))}
					</section>
				)}
				<ChatPanel
					documentId={id}
					messages={state.messages}
					more={state.moreMessages}
					archived={document.archived}
					me={props.me.login}
					model={state.model}
					onPosted={onPosted}
					onRetried={onRetried}
					onOlder={onOlder}
					onLoaded={onLoaded}
				/>
			</aside>
		</div>
	);
}

function DocumentHeader(props: { state: DocumentState; canWrite: boolean; live: LiveState }): ReactNode {
	const { document } = props.state.payload;
	const [error, setError] = useState<string | null>(null);
	const act = async (action: "archive" | "unarchive" | "delete") => {
		setError(null);
		try {
			if (action === "delete") {
				if (!confirm(`Delete "${document.title}"? It cannot be brought back here.`)) return;
				await api("DELETE", `/api/documents/${document.id}`);
				location.assign(`/?${new URLSearchParams({ repository: document.repository })}`);
				return;
			}
			await api("POST", `/api/documents/${document.id}/${action}`);
		} catch (e) {
			setError(describeError(e));
		}
	};
	return (
		<header className="document-header">
			<p className="muted">
				<a href={`/?${new URLSearchParams({ repository: document.repository })}`}>{document.repository}</a> ·
				revision {document.revision} · <span data-live={props.live}>{LIVE_LABELS[props.live]}</span>
			</p>
			<h1>
				{document.title} {document.archived && <span className="badge">Archived</span>}
			</h1>
			{props.canWrite && (
				<div className="row">
					<button type="button" onClick={() => act(document.archived ? "unarchive" : "archive")}>
						{document.archived ? "Unarchive" : "Archive"}
					</button>
					<button type="button" className="danger" onClick={() => act("delete")}>
						Delete
					</button>
				</div>
			)}
			{error && <p role="alert">{error}</p>}
		</header>
	);
}

/** The document's blocks, each rendered on its own so Decisions can sit right after the block they follow. */
function DocumentBody({ state }: { state: DocumentState }): ReactNode {
	const { document, images } = state.payload;
	const imageSet = useMemo(() => new Set(images), [images]);
	const links = useMemo(() => linkDefinitions(document.source), [document.source]);
	const positions = positionCards(document.blocks, state.decisions);
	const decisions = new Map(state.decisions.map((d) => [d.id, d]));
	const after = new Map<number | null, DecisionView[]>();
	for (const p of positions)
		after.set(p.afterBlock, [...(after.get(p.afterBlock) ?? []), decisions.get(p.decisionId)!]);
	const cards = (at: number | null) =>
		after.get(at)?.map((d) => <DecisionCard key={d.id} decision={d} images={imageSet} />);
	return (
		<article className="document-body">
			{document.blocks.length === 0 && <p className="muted">This document is empty.</p>}
			{document.blocks.map((block) => (
				<div key={`${block.index}:${block.digest}`} className="block" data-block={block.index}>
					<Markdown source={document.source.slice(block.start, block.end)} images={imageSet} links={links} />
					{cards(block.index)}
				</div>
			))}
			{after.has(null) && (
				<section className="decisions-end" aria-label="Decisions">
					<h2>Decisions</h2>
					{cards(null)}
				</section>
			)}
		</article>
	);
}
