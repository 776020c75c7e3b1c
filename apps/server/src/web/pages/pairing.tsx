// The pairing page /pair/<id>, the link `chopin connect` prints: a signed-in person checks the machine (its label,
// checkouts and CLI), types the code the terminal printed, makes the autoRun choice and selects Connect. In GitHub
// mode Connect goes on through GitHub for the machine's own grant, which brings the browser back here confirmed.
import { type FormEvent, type ReactNode, useCallback, useEffect, useId, useRef, useState } from "react";
import { ApiError, api, describeError, type Me, type PairingConfirmed, type PairingView } from "../api";
import {
	CODE_PATTERN,
	describeClient,
	formatClock,
	formatTime,
	isLocalPath,
	normaliseCode,
	plural,
	retrySeconds,
} from "../machine-text";

/** While a pairing is confirmed but not yet claimed, look again this often to say when the terminal has it. */
const CLAIM_POLL_MS = 3_000;

type Loaded =
	| { kind: "loading" }
	| { kind: "missing" }
	| { kind: "failed"; message: string }
	| { kind: "pairing"; pairing: PairingView };

export function PairingPage(props: { me: Me; id: string }): ReactNode {
	const { id } = props;
	const [loaded, setLoaded] = useState<Loaded>({ kind: "loading" });

	const load = useCallback(async () => {
		try {
			const { pairing } = await api<{ pairing: PairingView }>(
				"GET",
				`/api/connector/pairings/${encodeURIComponent(id)}`,
			);
			setLoaded({ kind: "pairing", pairing });
		} catch (e) {
			if (e instanceof ApiError && e.status === 404) setLoaded({ kind: "missing" });
			else setLoaded({ kind: "failed", message: describeError(e) });
		}
	}, [id]);

	useEffect(() => {
		load();
	}, [load]);

	// Confirmed: the terminal claims its credential on its next poll; say so when it has.
	const status = loaded.kind === "pairing" ? loaded.pairing.status : undefined;
	useEffect(() => {
		if (status !== "confirmed") return;
		const timer = setInterval(load, CLAIM_POLL_MS);
		return () => clearInterval(timer);
	}, [status, load]);

	if (loaded.kind === "loading") return <p aria-busy="true">Loading…</p>;
	if (loaded.kind === "failed") return <p role="alert">{loaded.message}</p>;
	if (loaded.kind === "missing") {
		return (
			<Outcome title="There is no such pairing" state="missing">
				<p>
					Check that the link is the one your terminal printed. If it is, the pairing is gone: run{" "}
					<code>chopin connect</code> again for a new link and code.
				</p>
			</Outcome>
		);
	}

	const { pairing } = loaded;
	const mine = !pairing.confirmedBy || pairing.confirmedBy.toLowerCase() === props.me.login.toLowerCase();
	switch (pairing.status) {
		case "expired":
			return (
				<Outcome title="This pairing expired" state="expired">
					<p>
						A pairing must be confirmed and picked up by the terminal within 5 minutes of{" "}
						<code>chopin connect</code> starting it, and this one ran out at {formatTime(pairing.expiresAt)}.
					</p>
					<p>
						Run <code>chopin connect</code> again in your terminal for a new link and code.
					</p>
				</Outcome>
			);
		case "confirmed":
		case "claimed":
			return (
				<Outcome title="Machine connected" state={pairing.status}>
					<p role="status">{pairing.label} is connected. You can close this tab; the terminal continues.</p>
					{!mine && <p className="muted">Connected by @{pairing.confirmedBy}.</p>}
					<p className="muted" data-claimed={pairing.status === "claimed"}>
						{pairing.status === "claimed"
							? "The terminal has picked up the machine's credential."
							: "Waiting for the terminal to pick up the machine's credential…"}
					</p>
					<p>
						<a href="/machines">See your machines</a>
					</p>
				</Outcome>
			);
		case "authorizing":
			if (!mine) {
				return (
					<Outcome title={`@${pairing.confirmedBy} is connecting ${pairing.label}`} state="taken">
						<p>Someone else confirmed this pairing, so only they can finish it.</p>
					</Outcome>
				);
			}
			return <ConfirmForm pairing={pairing} resumed onChanged={load} />;
		case "pending":
			return <ConfirmForm pairing={pairing} resumed={false} onChanged={load} />;
	}
}

function Outcome(props: { title: string; state: string; children: ReactNode }): ReactNode {
	return (
		<section className="narrow stack pairing" data-pairing-state={props.state}>
			<h1>{props.title}</h1>
			{props.children}
		</section>
	);
}

/** The machine as the person checks it before connecting: its label, CLI, checkouts and when the link runs out. */
function PairingFacts({ pairing }: { pairing: PairingView }): ReactNode {
	return (
		<>
			<dl className="facts">
				<dt>Machine</dt>
				<dd>
					<strong>{pairing.label}</strong>
				</dd>
				<dt>Client</dt>
				<dd>{describeClient(pairing.client)}</dd>
				<dt>Link valid until</dt>
				<dd>{formatTime(pairing.expiresAt)}</dd>
			</dl>
			<h2>{plural(pairing.checkouts.length, "checkout")}</h2>
			<ul className="checkouts">
				{pairing.checkouts.map((c) => (
					<li key={`${c.path}\u0000${c.repository}`}>
						<strong>{c.repository}</strong> <code>{c.path}</code>
						{c.branch && <span className="muted"> on {c.branch}</span>}
					</li>
				))}
			</ul>
		</>
	);
}

function ConfirmForm(props: { pairing: PairingView; resumed: boolean; onChanged(): void }): ReactNode {
	const { pairing } = props;
	const [code, setCode] = useState("");
	const [autoRun, setAutoRun] = useState(false);
	const [codeError, setCodeError] = useState<string | null>(null);
	const [error, setError] = useState<string | null>(null);
	const [busy, setBusy] = useState(false);
	/** Set while wrong codes are rate-limited: Connect waits until then (the browser's clock). */
	const [blockedUntil, setBlockedUntil] = useState<number | null>(null);
	const input = useRef<HTMLInputElement>(null);
	const codeId = useId();
	const hintId = useId();
	const errorId = useId();

	useEffect(() => {
		if (blockedUntil === null) return;
		const timer = setTimeout(() => setBlockedUntil(null), Math.max(0, blockedUntil - Date.now()));
		return () => clearTimeout(timer);
	}, [blockedUntil]);

	const submit = async (event: FormEvent) => {
		event.preventDefault();
		setError(null);
		const typed = normaliseCode(code);
		if (!CODE_PATTERN.test(typed)) {
			setCodeError(
				"The code has eight letters and digits, like ABCD-2345: type it as your terminal shows it.",
			);
			input.current?.focus();
			return;
		}
		setCode(typed);
		setCodeError(null);
		setBusy(true);
		try {
			const answer = await api<PairingConfirmed>(
				"POST",
				`/api/connector/pairings/${encodeURIComponent(pairing.id)}/confirm`,
				{ code: typed, autoRun },
			);
			if (answer.status === "authorize") {
				// GitHub mode: GitHub grants the machine its own authorization, then sends the browser back here.
				if (!isLocalPath(answer.location)) throw new Error("The server answered with a foreign address.");
				location.assign(answer.location);
				return;
			}
			props.onChanged();
		} catch (e) {
			setBusy(false);
			if (!(e instanceof ApiError)) {
				setError(describeError(e));
				return;
			}
			switch (e.code) {
				case "pairing-code-wrong":
					setCodeError(describeError(e));
					input.current?.select();
					return;
				case "rate-limited": {
					const seconds = retrySeconds(e.body);
					const until = Date.now() + seconds * 1000;
					setBlockedUntil(until);
					setError(
						`Too many wrong codes. Wait ${plural(seconds, "second")} and try again (at ${formatClock(until)}).`,
					);
					return;
				}
				// The pairing moved on (it expired, or someone confirmed it): show what it is now.
				case "pairing-expired":
				case "pairing-confirmed":
				case "pairing-not-found":
					props.onChanged();
					return;
				default:
					setError(describeError(e));
			}
		}
	};

	const blocked = blockedUntil !== null;
	return (
		<section className="narrow stack pairing" data-pairing-state={pairing.status}>
			<h1>Connect {pairing.label} to Chopin</h1>
			<p>
				A terminal ran <code>chopin connect</code> and asks to connect this machine to your account. Check
				that it is yours before you connect it: it will run Planners and builds for you.
			</p>
			<PairingFacts pairing={pairing} />
			{props.resumed && (
				<p className="note" role="note">
					You confirmed this pairing, but GitHub has not approved it for this machine yet. Type the code again
					and select Connect to continue with GitHub.
				</p>
			)}
			<form onSubmit={submit} className="stack card" noValidate>
				<label htmlFor={codeId}>Type the code shown in your terminal</label>
				<input
					id={codeId}
					ref={input}
					name="code"
					className="code-input"
					value={code}
					onChange={(e) => setCode(e.target.value)}
					autoComplete="one-time-code"
					autoCapitalize="characters"
					spellCheck={false}
					maxLength={16}
					placeholder="XXXX-XXXX"
					required
					aria-invalid={codeError !== null}
					aria-describedby={codeError ? `${hintId} ${errorId}` : hintId}
				/>
				<p id={hintId} className="muted">
					It is printed next to the link, as two groups of four letters and digits. Chopin never shows it
					here: typing it proves the terminal in front of you is the one being connected.
				</p>
				{codeError && (
					<p id={errorId} role="alert">
						{codeError}
					</p>
				)}
				<label className="choice">
					<input
						type="checkbox"
						name="autoRun"
						checked={autoRun}
						onChange={(e) => setAutoRun(e.target.checked)}
					/>
					<span>
						Let Chopin build and prototype automatically on this machine
						<span className="muted block">
							Left off, nothing is built here until a person starts it. To change this later, connect the
							machine again.
						</span>
					</span>
				</label>
				{error && <p role="alert">{error}</p>}
				<button type="submit" className="primary" disabled={busy || blocked}>
					Connect
				</button>
			</form>
		</section>
	);
}
