// A machine's pins on the Machines page: the repositories whose documents run on it, each with Unpin, and a form
// to pin it to another of its repositories (a pin moves that repository's documents to it at once).
import { type FormEvent, type ReactNode, useId, useState } from "react";
import { api, describeError, type MachinePin, type MachineView } from "../api";
import { pinnableRepositories } from "../machine-text";

export function MachinePins(props: {
	machine: MachineView;
	/** Every pin the person holds, of any machine. */
	pins: MachinePin[];
	/** Labels of the person's machines, by id, to say where a repository is pinned now. */
	labels: Map<string, string>;
	onChanged(): Promise<void>;
}): ReactNode {
	const { machine } = props;
	const repositories = pinnableRepositories(machine);
	const pinnedHere = props.pins.filter((p) => p.machine === machine.id);
	const pinOf = (repository: string) => props.pins.find((p) => p.repository === repository.toLowerCase());
	/** The machine's own spelling of a pinned repository (pins are kept lower-cased). */
	const spelled = (repository: string) =>
		repositories.find((r) => r.toLowerCase() === repository) ?? repository;
	const choices = repositories.filter((r) => pinOf(r)?.machine !== machine.id);
	const [choice, setChoice] = useState("");
	const [error, setError] = useState<string | null>(null);
	const [busy, setBusy] = useState(false);
	const selectId = useId();
	const chosen = choices.includes(choice) ? choice : (choices[0] ?? "");

	const pin = async (repository: string, machineId: string | null) => {
		setBusy(true);
		setError(null);
		try {
			const [owner, name] = repository.split("/");
			await api(
				"PUT",
				`/api/repositories/${encodeURIComponent(owner!)}/${encodeURIComponent(name!)}/machine`,
				{ machine: machineId },
			);
			await props.onChanged();
		} catch (e) {
			setError(describeError(e));
		} finally {
			setBusy(false);
		}
	};
	const submit = (event: FormEvent) => {
		event.preventDefault();
		if (chosen) pin(chosen, machine.id);
	};

	return (
		<section className="machine-pins" aria-label={`Pins of ${machine.label}`}>
			<h3>Pinned repositories</h3>
			{pinnedHere.length === 0 ? (
				<p className="muted">
					None: Chopin picks among your machines for each document (the one that last worked on it, then the
					most recently active idle one).
				</p>
			) : (
				<ul className="pins">
					{pinnedHere.map((p) => (
						<li key={p.repository} data-pinned={p.repository}>
							<span>
								Documents of <strong>{spelled(p.repository)}</strong> run here
							</span>{" "}
							<button type="button" disabled={busy} onClick={() => pin(spelled(p.repository), null)}>
								Unpin<span className="visually-hidden"> {spelled(p.repository)}</span>
							</button>
						</li>
					))}
				</ul>
			)}
			{choices.length > 0 && (
				<form className="row" onSubmit={submit}>
					<label htmlFor={selectId} className="inline">
						Pin to a repository
					</label>
					<select id={selectId} value={chosen} onChange={(e) => setChoice(e.target.value)}>
						{choices.map((r) => {
							const elsewhere = pinOf(r);
							const label = elsewhere && props.labels.get(elsewhere.machine);
							return (
								<option key={r} value={r}>
									{label ? `${r} (now pinned to ${label})` : r}
								</option>
							);
						})}
					</select>
					<button type="submit" disabled={busy || !chosen}>
						Pin<span className="visually-hidden"> {machine.label}</span>
					</button>
				</form>
			)}
			{error && <p role="alert">{error}</p>}
		</section>
	);
}
