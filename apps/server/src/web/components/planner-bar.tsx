// The document's Planner: who is attached (or nobody), and Stop, Resume and Reset Planner for writers,
// which call the agent endpoint's routes (a server without them says so).
import { type ReactNode, useState } from "react";
import { api, describeError, type PlannerStatus } from "../api";

const STATES: Record<PlannerStatus["state"], string> = {
	unattached: "No Planner is attached",
	starting: "Starting",
	attached: "Attached",
	working: "Working",
	grace: "Stepped away",
	disconnected: "Disconnected",
};

export function PlannerBar(props: {
	documentId: string;
	planner: PlannerStatus;
	canWrite: boolean;
}): ReactNode {
	const { planner } = props;
	const [note, setNote] = useState<string | null>(null);
	const [busy, setBusy] = useState(false);
	const control = async (action: "stop" | "resume" | "reset") => {
		setBusy(true);
		setNote(null);
		try {
			await api("POST", `/api/documents/${props.documentId}/planner/${action}`);
			setNote(`${action[0]!.toUpperCase()}${action.slice(1)} sent.`);
		} catch (e) {
			setNote(describeError(e));
		} finally {
			setBusy(false);
		}
	};
	const attached = planner.state !== "unattached";
	return (
		<section className="planner-bar" aria-label="Planner">
			<p>
				<strong>Planner:</strong> <span data-planner-state={planner.state}>{STATES[planner.state]}</span>
				{planner.login && <> · @{planner.login}</>}
				{planner.until !== undefined && <> · until {new Date(planner.until).toLocaleTimeString()}</>}
				{planner.restarting && (
					<span data-planner-restarting="">
						{" "}
						· Chopin restarted; reconnecting to @{planner.login}'s machine
					</span>
				)}
			</p>
			{props.canWrite && (
				<div className="row">
					<button type="button" disabled={busy || !attached} onClick={() => control("stop")}>
						Stop Planner
					</button>
					<button type="button" disabled={busy || !attached} onClick={() => control("resume")}>
						Resume Planner
					</button>
					<button type="button" disabled={busy || !attached} onClick={() => control("reset")}>
						Reset Planner
					</button>
				</div>
			)}
			{note && <p role="status">{note}</p>}
		</section>
	);
}
