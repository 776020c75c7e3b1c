// The start form for writers: Build or Investigate, a brief, the base commit (prefilled with the HEAD of the checkout
// the chosen machine reported, checked as a full commit id before sending), which machine will run it or why none
// can, and Start. Each start has its own key, so a retried click is the same run (docs/server.md, Builds).
import { type FormEvent, type ReactNode, useCallback, useEffect, useId, useRef, useState } from "react";
import { ApiError, api, apiResponse, type BuildBase, type BuildView, describeError } from "../api";
import { BUILD_BRIEF, isFullCommit, KIND_WORDS, normaliseCommit } from "../build-text";
import type { StartAgain } from "./build-actions";

type Kind = BuildView["kind"];

/** A fresh key for one start: random, in the form the server takes (1 to 128 of A-Za-z0-9._:-). */
function newStartKey(): string {
	const bytes = crypto.getRandomValues(new Uint8Array(16));
	return `page-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export function BuildStart(props: {
	documentId: string;
	/** Set by a card's Start again: fills the form (a new nonce each time). */
	prefill: (StartAgain & { nonce: number }) | null;
	onStarted(build: BuildView): void;
}): ReactNode {
	const { documentId, onStarted } = props;
	const [kind, setKind] = useState<Kind>("build");
	const [brief, setBrief] = useState(BUILD_BRIEF);
	const [base, setBase] = useState("");
	const [baseError, setBaseError] = useState<string | null>(null);
	const [info, setInfo] = useState<BuildBase | null>(null);
	const [busy, setBusy] = useState(false);
	const [note, setNote] = useState<string | null>(null);
	const [error, setError] = useState<string | null>(null);
	/** The key of the start under way, with what it starts: kept until that start is answered with a run. */
	const attempt = useRef<{ key: string; content: string } | null>(null);
	const sending = useRef(false);
	/** Whether the person typed a base: a later HEAD never replaces what they typed. */
	const typedBase = useRef(false);
	const form = useRef<HTMLFormElement>(null);
	const briefField = useRef<HTMLTextAreaElement>(null);
	const ids = { brief: useId(), base: useId(), baseError: useId(), machine: useId() };

	const loadBase = useCallback(async () => {
		try {
			const answer = await api<BuildBase>(
				"GET",
				`/api/documents/${encodeURIComponent(documentId)}/builds/base`,
			);
			setInfo(answer);
			if (!typedBase.current && answer.head) setBase(answer.head);
		} catch {
			// The form still works without it: the base is typed, and the start's refusal says what is wrong.
		}
	}, [documentId]);

	// Asked again when the person comes back to the page: their machine may have come online meanwhile.
	useEffect(() => {
		loadBase();
		const again = () => {
			if (document.visibilityState === "visible") loadBase();
		};
		document.addEventListener("visibilitychange", again);
		window.addEventListener("focus", again);
		return () => {
			document.removeEventListener("visibilitychange", again);
			window.removeEventListener("focus", again);
		};
	}, [loadBase]);

	const { prefill } = props;
	useEffect(() => {
		if (!prefill) return;
		setKind(prefill.kind);
		setBrief(prefill.brief);
		setBase(prefill.base);
		typedBase.current = true;
		setBaseError(null);
		setNote(null);
		setError(null);
		form.current?.scrollIntoView({ block: "nearest" });
		briefField.current?.focus();
	}, [prefill]);

	const chooseKind = (next: Kind) => {
		// The build's default brief is not a question: it goes when switching to an investigation, and comes back.
		if (next === "investigation" && brief === BUILD_BRIEF) setBrief("");
		if (next === "build" && brief.trim() === "") setBrief(BUILD_BRIEF);
		setKind(next);
	};

	const submit = async (event: FormEvent) => {
		event.preventDefault();
		if (sending.current) return;
		setNote(null);
		setError(null);
		const commit = normaliseCommit(base);
		if (!isFullCommit(commit)) {
			setBaseError("The base must be a full commit id: 40 hexadecimal characters (64 for SHA-256).");
			document.getElementById(ids.base)?.focus();
			return;
		}
		setBaseError(null);
		if (brief.trim() === "") {
			setError(kind === "build" ? "Say what to build." : "Say what to find out.");
			briefField.current?.focus();
			return;
		}
		const content = JSON.stringify([kind, brief, commit]);
		if (attempt.current?.content !== content) attempt.current = { key: newStartKey(), content };
		sending.current = true;
		setBusy(true);
		try {
			const { status, data } = await apiResponse<{ build: BuildView }>(
				"POST",
				`/api/documents/${encodeURIComponent(documentId)}/builds`,
				{ kind, brief, base: commit, key: attempt.current.key },
			);
			attempt.current = null;
			onStarted(data.build);
			const what = KIND_WORDS[kind].toLowerCase();
			setNote(
				status === 201
					? `Started the ${what}: its card is below.`
					: `This ${what} was started already: its card is below.`,
			);
		} catch (e) {
			setError(describeError(e));
			// The machine may have changed (offline, unable to build): say what is true now.
			if (e instanceof ApiError) loadBase();
		} finally {
			sending.current = false;
			setBusy(false);
		}
	};

	return (
		<form
			ref={form}
			className="build-start stack"
			onSubmit={submit}
			aria-label="Start a build or investigation"
		>
			<fieldset className="row kind-choice">
				<legend>What to start</legend>
				<label className="choice">
					<input
						type="radio"
						name={`kind-${ids.brief}`}
						value="build"
						checked={kind === "build"}
						onChange={() => chooseKind("build")}
					/>
					<span>
						Build{" "}
						<span className="muted">(implement the plan; may push a branch and open a pull request)</span>
					</span>
				</label>
				<label className="choice">
					<input
						type="radio"
						name={`kind-${ids.brief}`}
						value="investigation"
						checked={kind === "investigation"}
						onChange={() => chooseKind("investigation")}
					/>
					<span>
						Investigate <span className="muted">(a read-only question about the code)</span>
					</span>
				</label>
			</fieldset>
			<label htmlFor={ids.brief}>Brief</label>
			<textarea
				id={ids.brief}
				ref={briefField}
				rows={3}
				value={brief}
				maxLength={16_000}
				placeholder={kind === "build" ? BUILD_BRIEF : "What do you want to find out about the code?"}
				onChange={(e) => setBrief(e.target.value)}
			/>
			<label htmlFor={ids.base}>Base commit</label>
			<input
				id={ids.base}
				className="commit-input"
				value={base}
				spellCheck={false}
				autoComplete="off"
				aria-invalid={baseError ? true : undefined}
				aria-describedby={baseError ? ids.baseError : ids.machine}
				onChange={(e) => {
					typedBase.current = true;
					setBase(e.target.value);
				}}
			/>
			{baseError && (
				<p id={ids.baseError} role="alert">
					{baseError}
				</p>
			)}
			<p id={ids.machine} className="muted build-machine">
				{machineLine(info)}
			</p>
			<div className="row">
				<button type="submit" className="primary" disabled={busy}>
					Start {KIND_WORDS[kind].toLowerCase()}
				</button>
			</div>
			{note && <p role="status">{note}</p>}
			{error && <p role="alert">{error}</p>}
		</form>
	);
}

/** Which machine would run it, and whether it can, from the base answer; the base's source when known. */
function machineLine(info: BuildBase | null): string {
	if (!info) return "Looking for your machine…";
	const { machine, runner, head } = info;
	if (!machine) {
		return "None of your machines can run it: choose one with the machine line above, or run chopin connect on a machine that can build.";
	}
	const name = JSON.stringify(machine.label);
	if (!machine.online)
		return `It would run on your machine ${name}, which is offline: start chopin on it first.`;
	if (runner?.available !== true) {
		const why =
			runner?.reason?.replace(/[.\s]+$/, "") ?? "its chopin does not run coding agents (upgrade it)";
		return `Your machine ${name} can't run builds: ${why}.`;
	}
	return head
		? `It runs on your machine ${name}; the base is its checkout's HEAD unless you change it.`
		: `It runs on your machine ${name}. Its checkout's HEAD is not known: type the base commit.`;
}
