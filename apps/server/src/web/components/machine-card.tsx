// One machine on the Machines page: online or offline and its last contact, its CLI, checkouts, the autoRun choice,
// the Planners and runs it reported, its pins, and Disconnect (which the page confirms in a dialog).
import type { ReactNode } from "react";
import type { MachinePin, MachineRunView, MachineView, NamedDocument } from "../api";
import { describeClient, formatTime, plural } from "../machine-text";
import { MachinePins } from "./machine-pin";

type PlannerView = MachineView["planners"][number];

const PLANNER_STATES: Record<PlannerView["state"], string> = {
	starting: "starting",
	running: "running",
	backoff: "restarting after a failure",
	stopped: "stopped",
	failed: "failed",
};

const RUN_STATES: Record<MachineRunView["displayStatus"], string> = {
	preparing: "preparing",
	running: "running",
	paused: "paused",
	finished: "finished",
	failed: "failed",
	stopped: "stopped",
	"machine-offline": "machine offline",
	"needs-decision": "machine offline: needs a decision on its document's page",
};

export function MachineCard(props: {
	machine: MachineView;
	documents: Record<string, NamedDocument>;
	pins: MachinePin[];
	labels: Map<string, string>;
	onDisconnect(machine: MachineView): void;
	onChanged(): Promise<void>;
}): ReactNode {
	const { machine } = props;
	const headingId = `machine-${machine.id}`;
	const waiting = machine.assigned.filter((d) => !machine.planners.some((p) => p.document === d));
	return (
		<article
			className="machine card stack"
			aria-labelledby={headingId}
			data-machine-id={machine.id}
			data-online={machine.online}
		>
			<header className="machine-header">
				<h2 id={headingId}>{machine.label}</h2>
				<span className={`badge status-${machine.online ? "online" : "offline"}`}>
					{machine.online ? "Online" : "Offline"}
				</span>
				{machine.reauthorize && <span className="badge status-failed">Needs pairing again</span>}
			</header>
			<p className="muted">
				Last contact {formatTime(machine.lastContactAt)} · {describeClient(machine.client)} · connected{" "}
				{formatTime(machine.createdAt)}
			</p>
			{machine.reauthorize && (
				<p className="failure">
					Its GitHub authorization ended, so it can do nothing until you run <code>chopin connect</code> on it
					again.
				</p>
			)}
			<dl className="facts">
				<dt>Builds and prototypes</dt>
				<dd data-auto-run={machine.autoRun}>
					{machine.autoRun ? "Chopin starts them automatically" : "Only when a person starts them"}
				</dd>
				<dt>Repositories</dt>
				<dd>{machine.repositories.length ? machine.repositories.join(", ") : "none"}</dd>
				{machine.sandbox && (
					<>
						<dt>Sandbox</dt>
						<dd>
							{machine.sandbox.kind === "none" ? "none" : machine.sandbox.kind}
							{machine.sandbox.reason && <span className="muted"> ({machine.sandbox.reason})</span>}
						</dd>
					</>
				)}
			</dl>

			<h3>{plural(machine.checkouts.length, "checkout")}</h3>
			<ul className="checkouts">
				{machine.checkouts.map((c) => (
					<li key={`${c.path}\u0000${c.repository}`}>
						<strong>{c.repository}</strong> <code>{c.path}</code>
						{c.branch && <span className="muted"> on {c.branch}</span>}
					</li>
				))}
			</ul>

			<h3>Planners</h3>
			{machine.planners.length === 0 && waiting.length === 0 ? (
				<p className="muted">No Planner runs here now.</p>
			) : (
				<ul className="planners">
					{machine.planners.map((p) => (
						<li key={p.document} data-document={p.document} data-state={p.state}>
							<DocumentLink id={p.document} documents={props.documents} />{" "}
							<span className={`badge status-${p.state}`}>{PLANNER_STATES[p.state]}</span>
							{p.restarts > 0 && <span className="muted"> · {plural(p.restarts, "restart")}</span>}
							{p.reason && <span className="muted"> · {p.reason}</span>}
							<br />
							<code className="path">{p.worktree}</code>
						</li>
					))}
					{waiting.map((d) => (
						<li key={d} data-document={d} data-state="asked">
							<DocumentLink id={d} documents={props.documents} />{" "}
							<span className="badge status-waiting">asked, not started yet</span>
						</li>
					))}
				</ul>
			)}

			<h3>Runs</h3>
			{machine.runs.length === 0 ? (
				<p className="muted">No runs.</p>
			) : (
				<ul className="runs-list">
					{machine.runs.map((r) => (
						<li key={r.id} data-run-id={r.id} data-status={r.displayStatus}>
							<span>Run {r.id}</span>{" "}
							<span className={`badge status-${r.displayStatus}`}>{RUN_STATES[r.displayStatus]}</span>
							{r.document && (
								<>
									{" "}
									for <DocumentLink id={r.document} documents={props.documents} />
								</>
							)}
							{r.offlineUntil !== undefined && (
								<span className="muted">
									{" "}
									· shows failed after {formatTime(r.offlineUntil)} unless it is back
								</span>
							)}
							<br />
							<code className="path">{r.worktree}</code>
						</li>
					))}
				</ul>
			)}

			<MachinePins machine={machine} pins={props.pins} labels={props.labels} onChanged={props.onChanged} />

			<div className="row">
				<button type="button" className="danger" onClick={() => props.onDisconnect(machine)}>
					Disconnect<span className="visually-hidden"> {machine.label}</span>
				</button>
			</div>
		</article>
	);
}

/** A document by its title when the person can read it, else by its id. */
function DocumentLink(props: { id: string; documents: Record<string, NamedDocument> }): ReactNode {
	const named = props.documents[props.id];
	return (
		<a href={`/d/${encodeURIComponent(props.id)}`}>
			{named ? named.title : `Document ${props.id}`}
			{named && <span className="muted"> ({named.repository})</span>}
		</a>
	);
}
