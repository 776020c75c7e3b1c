// A run's buttons, exactly those its `actions` list (the server decides what can be done now): Stop, Resume,
// Discard after a confirmation dialog, and Start again, which fills the start form with the same kind, brief and base.
import { type ReactNode, useState } from "react";
import { api, type BuildView, describeError } from "../api";
import { KIND_WORDS } from "../build-text";
import { ConfirmDialog } from "./confirm-dialog";

export interface StartAgain {
	kind: BuildView["kind"];
	brief: string;
	base: string;
}

export function BuildActions(props: {
	build: BuildView;
	/** The run as the server answered (stop, resume), or gone (discard). */
	onChanged(change: { build: BuildView } | { removed: string }): void;
	onStartAgain(start: StartAgain): void;
}): ReactNode {
	const { build, onChanged } = props;
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState<string | null>(null);
	const [confirming, setConfirming] = useState(false);
	const what = KIND_WORDS[build.kind].toLowerCase();
	const path = (action: string) => `/api/builds/${encodeURIComponent(build.id)}/${action}`;

	const act = async (action: "stop" | "resume") => {
		setBusy(true);
		setError(null);
		try {
			onChanged(await api<{ build: BuildView }>("POST", path(action)));
		} catch (e) {
			setError(describeError(e));
		} finally {
			setBusy(false);
		}
	};

	const discard = async () => {
		setBusy(true);
		setError(null);
		try {
			await api("POST", path("discard"));
			setConfirming(false);
			onChanged({ removed: build.id });
		} catch (e) {
			setError(describeError(e));
		} finally {
			setBusy(false);
		}
	};

	if (build.actions.length === 0) return null;
	return (
		<div className="row build-actions">
			{build.actions.includes("stop") && (
				<button type="button" disabled={busy} onClick={() => act("stop")}>
					Stop
				</button>
			)}
			{build.actions.includes("resume") && (
				<button type="button" className="primary" disabled={busy} onClick={() => act("resume")}>
					Resume
				</button>
			)}
			{build.actions.includes("start-again") && (
				<button
					type="button"
					onClick={() => props.onStartAgain({ kind: build.kind, brief: build.brief, base: build.base })}
				>
					Start again
				</button>
			)}
			{build.actions.includes("discard") && (
				<button type="button" className="danger" disabled={busy} onClick={() => setConfirming(true)}>
					Discard
				</button>
			)}
			{error && !confirming && <p role="alert">{error}</p>}
			<ConfirmDialog
				open={confirming}
				title={`Discard this ${what}?`}
				confirmLabel={`Discard ${what}`}
				busy={busy}
				error={confirming ? error : null}
				onConfirm={discard}
				onClose={() => {
					setConfirming(false);
					setError(null);
				}}
			>
				<p>It leaves this page for everyone. {discardEffect(build)} This cannot be undone.</p>
			</ConfirmDialog>
		</div>
	);
}

/** What discarding does on the machine, as the rules say (docs/machines.md, Runs). */
function discardEffect(build: BuildView): string {
	if (build.status === "offered") return "Its machine has not taken it yet, so it is withdrawn.";
	if (build.status === "lost") return "Its machine no longer holds it.";
	const when = build.machine.online ? "" : " when it is back";
	return build.live
		? `Its machine is told to stop it and delete its workspace${when}.`
		: `Its machine is told to delete its workspace${when}.`;
}
