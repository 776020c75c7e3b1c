// The Machines page /machines: each of the person's machines (online or not, what it runs, its pins), kept current
// by a periodic refresh, and Disconnect after a confirmation dialog.
import { type ReactNode, useCallback, useEffect, useRef, useState } from "react";
import { api, describeError, type MachinesPage as MachinesData, type MachineView } from "../api";
import { ConfirmDialog } from "../components/confirm-dialog";
import { MachineCard } from "../components/machine-card";

/**
 * How often the page asks again while it is visible. Machines report over their own channel and the
 * pages' socket carries document events only, so a refresh this often is the cheap way to stay current.
 */
export const MACHINES_REFRESH_MS = 5_000;

export function MachinesPage(): ReactNode {
	const [data, setData] = useState<MachinesData | null>(null);
	const [error, setError] = useState<string | null>(null);
	const [notice, setNotice] = useState<string | null>(null);
	const [target, setTarget] = useState<MachineView | null>(null);
	const [busy, setBusy] = useState(false);
	const [dialogError, setDialogError] = useState<string | null>(null);
	const noticeRef = useRef<HTMLParagraphElement>(null);
	/** Counts loads, so an answer that arrives after a newer one's is dropped. */
	const loads = useRef(0);

	const load = useCallback(async () => {
		const mine = ++loads.current;
		try {
			const next = await api<MachinesData>("GET", "/api/machines");
			if (mine !== loads.current) return;
			setData(next);
			setError(null);
		} catch (e) {
			if (mine === loads.current) setError(describeError(e));
		}
	}, []);

	useEffect(() => {
		load();
		const tick = () => {
			if (document.visibilityState === "visible") load();
		};
		const timer = setInterval(tick, MACHINES_REFRESH_MS);
		document.addEventListener("visibilitychange", tick);
		return () => {
			clearInterval(timer);
			document.removeEventListener("visibilitychange", tick);
		};
	}, [load]);

	const disconnect = async () => {
		if (!target) return;
		setBusy(true);
		setDialogError(null);
		try {
			await api("DELETE", `/api/machines/${encodeURIComponent(target.id)}`);
			setNotice(`${target.label} was disconnected. Its chopin process stops; pair it again to use it.`);
			setTarget(null);
			await load();
			// The card that had focus is gone: say what happened where focus lands.
			noticeRef.current?.focus();
		} catch (e) {
			setDialogError(describeError(e));
		} finally {
			setBusy(false);
		}
	};

	if (!data) return error ? <p role="alert">{error}</p> : <p aria-busy="true">Loading…</p>;
	const labels = new Map(data.machines.map((m) => [m.id, m.label]));
	return (
		<section className="stack machines">
			<h1>Machines</h1>
			<p className="muted">
				To connect a machine, run <code>chopin connect</code> in a checkout and open the link it prints. This
				page refreshes every {MACHINES_REFRESH_MS / 1000} seconds.
			</p>
			{notice && (
				<p ref={noticeRef} role="status" tabIndex={-1} className="notice">
					{notice}
				</p>
			)}
			{error && <p role="alert">{error}</p>}
			{data.machines.length === 0 ? (
				<p>You have no connected machines.</p>
			) : (
				data.machines.map((machine) => (
					<MachineCard
						key={machine.id}
						machine={machine}
						documents={data.documents}
						pins={data.pins}
						labels={labels}
						onDisconnect={(m) => {
							setDialogError(null);
							setTarget(m);
						}}
						onChanged={load}
					/>
				))
			)}
			<ConfirmDialog
				open={target !== null}
				title={target ? `Disconnect ${target.label}?` : "Disconnect"}
				confirmLabel={target ? `Disconnect ${target.label}` : "Disconnect"}
				busy={busy}
				error={dialogError}
				onConfirm={disconnect}
				onClose={() => {
					if (!busy) setTarget(null);
				}}
			>
				<p>
					Its credential stops working at once, so its chopin process stops and the Planners it runs end.
					Nothing on the machine is deleted. To use it again, run <code>chopin connect</code> on it.
				</p>
			</ConfirmDialog>
		</section>
	);
}
