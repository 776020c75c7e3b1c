// The document's machine line: which machine runs its Planner (or none), and for writers the choice of one of their
// own machines for this document, which overrides their pin and Chopin's own pick (docs/machines.md, Machine choice).
import { type FormEvent, type ReactNode, useCallback, useEffect, useId, useState } from "react";
import { api, type DocumentMachine, describeError, type MachinesPage, type MachineView } from "../api";

export function MachineChooser(props: {
	documentId: string;
	repository: string;
	canWrite: boolean;
	/** The Planner's state: when it changes, the document may have moved to another machine. */
	plannerState: string;
}): ReactNode {
	const { documentId } = props;
	const [choice, setChoice] = useState<DocumentMachine | null>(null);
	const [machines, setMachines] = useState<MachineView[] | null>(null);
	const [selected, setSelected] = useState<string | null>(null);
	const [note, setNote] = useState<string | null>(null);
	const [error, setError] = useState<string | null>(null);
	const [busy, setBusy] = useState(false);
	const selectId = useId();

	const load = useCallback(async () => {
		try {
			const [current, mine] = await Promise.all([
				api<DocumentMachine>("GET", `/api/documents/${encodeURIComponent(documentId)}/machine`),
				api<MachinesPage>("GET", "/api/machines"),
			]);
			setChoice(current);
			// Online ones first: an offline machine can run nothing until it is back.
			setMachines(
				[...mine.machines].sort(
					(a, b) => Number(b.online) - Number(a.online) || a.label.localeCompare(b.label),
				),
			);
			setError(null);
		} catch (e) {
			setError(describeError(e));
		}
	}, [documentId]);

	// biome-ignore lint/correctness/useExhaustiveDependencies: plannerState is the reason to look again.
	useEffect(() => {
		load();
	}, [load, props.plannerState]);

	if (!choice || !machines) {
		return error ? (
			<section className="machine-bar" aria-label="Machine">
				<p role="alert">{error}</p>
			</section>
		) : null;
	}

	const labelOf = (id: string | null) => machines.find((m) => m.id === id)?.label;
	const value = selected ?? choice.override ?? "";
	const { assigned } = choice;
	const runner = assigned && (assigned.label ?? `@${assigned.owner}'s machine`);
	const pinLabel = labelOf(choice.pin);
	const chosen = machines.find((m) => m.id === choice.override);

	const save = async (event: FormEvent) => {
		event.preventDefault();
		setBusy(true);
		setNote(null);
		setError(null);
		try {
			const machine = value === "" ? null : value;
			await api("PUT", `/api/documents/${encodeURIComponent(documentId)}/machine`, { machine });
			setSelected(null);
			await load();
			setNote(
				machine === null
					? "Saved: Chopin chooses among your machines for this document."
					: `Saved: this document's Planner runs on ${labelOf(machine) ?? "that machine"} for you.`,
			);
		} catch (e) {
			setError(describeError(e));
		} finally {
			setBusy(false);
		}
	};

	return (
		<section className="machine-bar" aria-label="Machine">
			<p data-assigned={assigned?.machine ?? ""}>
				<strong>Machine:</strong>{" "}
				{runner ? (
					<>
						{runner} runs this document's Planner
						{!assigned.online && <span className="muted"> (offline)</span>}
					</>
				) : (
					"No machine runs this document's Planner now."
				)}
			</p>
			{props.canWrite &&
				(machines.length === 0 ? (
					<p className="muted">
						You have no connected machines. <a href="/machines">Machines</a> says how to connect one.
					</p>
				) : (
					<form className="row" onSubmit={save}>
						<label htmlFor={selectId} className="inline">
							When you use it, run its Planner on
						</label>
						<select id={selectId} value={value} onChange={(e) => setSelected(e.target.value)}>
							<option value="">
								{pinLabel ? `Your pin for ${props.repository}: ${pinLabel}` : "Chopin's choice"}
							</option>
							{machines.map((m) => (
								<option key={m.id} value={m.id}>
									{m.label} ({m.online ? "online" : "offline"})
								</option>
							))}
						</select>
						<button type="submit" disabled={busy || value === (choice.override ?? "")}>
							Save machine
						</button>
					</form>
				))}
			{chosen && !chosen.online && (
				<p className="muted">
					{chosen.label} is offline: this document's Planner waits for it rather than running elsewhere.
				</p>
			)}
			{note && <p role="status">{note}</p>}
			{error && <p role="alert">{error}</p>}
		</section>
	);
}
