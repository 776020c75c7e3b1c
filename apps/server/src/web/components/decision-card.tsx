// A Decision's cards: each question with its heading and body (spec: Card text), its options (with their
// previews, option-preview.tsx), a written answer, and Cancel; answered and cancelled states show who settled
// what.
import type { Question } from "@chopin/agent-link";
import { type FormEvent, type ReactNode, useState } from "react";
import type { StoredAnswer } from "../../decisions/decision-view";
import { api, type DecisionView, describeError } from "../api";
import { InlineMarkdown, Markdown, splitCardText } from "../markdown";
import { OptionPreview } from "./option-preview";

type Questionnaire = Extract<Question, { method: "questionnaire" }>;
type QuestionnaireQuestion = Questionnaire["params"]["questions"][number];

/** Heading and body of a card's text: the first line inline only, the rest as Markdown with line breaks. */
export function CardText(props: { text: string; images: ReadonlySet<string>; level?: 3 | 4 }): ReactNode {
	const { heading, body } = splitCardText(props.text);
	const Heading = props.level === 4 ? "h4" : "h3";
	return (
		<>
			<Heading className="card-heading">
				<InlineMarkdown text={heading} images={props.images} />
			</Heading>
			{body.trim() && (
				<div className="card-body">
					<Markdown source={body} images={props.images} breaks />
				</div>
			)}
		</>
	);
}

/** An option's description: one line reads as a phrase, more lines as Markdown. */
function Description(props: { text: string; images: ReadonlySet<string> }): ReactNode {
	if (!props.text) return null;
	if (!/\r|\n/.test(props.text)) {
		return (
			<span className="option-description">
				<InlineMarkdown text={props.text} images={props.images} />
			</span>
		);
	}
	return (
		<div className="option-description">
			<Markdown source={props.text} images={props.images} breaks />
		</div>
	);
}

function answerText(answer: StoredAnswer): string {
	switch (answer.kind) {
		case "option":
		case "custom":
		case "chat":
			return answer.answer;
		case "multi":
			return answer.selected.join(", ");
		case "confirm":
			return answer.value ? "Yes" : "No";
		case "choice":
		case "written":
		case "text":
			return answer.value === "" ? "(empty)" : answer.value;
	}
}

function statusLine(decision: DecisionView): string {
	if (decision.status === "open") return "Open: waiting for an answer";
	if (decision.status === "answered")
		return `Answered${decision.settledBy ? ` (last by @${decision.settledBy})` : ""}`;
	if (decision.settledReason === "withdrawn") return "Withdrawn by the Planner";
	return `Cancelled${decision.settledBy ? ` by @${decision.settledBy}` : ""}`;
}

export function DecisionCard(props: { decision: DecisionView; images: ReadonlySet<string> }): ReactNode {
	const { decision } = props;
	const question = decision.question;
	const [error, setError] = useState<string | null>(null);
	const [busy, setBusy] = useState(false);

	const call = async (path: "answer" | "cancel", body: unknown) => {
		setBusy(true);
		setError(null);
		try {
			await api("POST", `/api/decisions/${decision.id}/${path}`, body);
		} catch (e) {
			setError(describeError(e));
		} finally {
			setBusy(false);
		}
	};
	const answer = (questionIndex: number, value: unknown) => call("answer", { questionIndex, answer: value });
	const cancel = (questionIndex: number) => call("cancel", { questionIndex });
	const answered = (index: number) => decision.answers.find((a) => a.questionIndex === index);
	const open = decision.status === "open";
	const shared = { images: props.images, busy, open, answer, cancel };

	return (
		<section
			className={`decision decision-${decision.status}`}
			aria-label={`Decision ${decision.seq}`}
			data-decision-id={decision.id}
			data-status={decision.status}
		>
			<p className="decision-status">
				<span className={`badge status-${decision.status}`}>{statusLine(decision)}</span>
			</p>
			{question.method === "questionnaire" ? (
				question.params.questions.map((q, i) => (
					<QuestionnaireCard
						// A question call never changes once asked: its questions' positions are their identity.
						// biome-ignore lint/suspicious/noArrayIndexKey: see above.
						key={`${decision.id}:${i}`}
						index={i}
						question={q}
						given={answered(i)}
						{...shared}
					/>
				))
			) : (
				<SimpleCard question={question} given={answered(0)} {...shared} />
			)}
			{error && <p role="alert">{error}</p>}
		</section>
	);
}

interface CardProps {
	images: ReadonlySet<string>;
	busy: boolean;
	open: boolean;
	given: DecisionView["answers"][number] | undefined;
	answer(questionIndex: number, value: unknown): void;
	cancel(questionIndex: number): void;
}

function Given(props: { given: NonNullable<CardProps["given"]> }): ReactNode {
	return (
		<p className="given">
			Answer: <strong>{answerText(props.given.answer)}</strong>{" "}
			<span className="muted">by @{props.given.answeredBy}</span>
		</p>
	);
}

function QuestionnaireCard(props: CardProps & { index: number; question: QuestionnaireQuestion }): ReactNode {
	const { question: q, index } = props;
	const [picked, setPicked] = useState<string[]>([]);
	const [written, setWritten] = useState("");
	const [groupName] = useState(() => `q-${index}-${Math.random().toString(36).slice(2, 8)}`);
	const editable = props.open && !props.given;
	const submit = (event: FormEvent) => {
		event.preventDefault();
		if (written.trim()) return props.answer(index, { kind: "written", text: written });
		if (q.multiSelect) return props.answer(index, { kind: "multi", labels: picked });
		return props.answer(index, { kind: "option", label: picked[0] });
	};
	const toggle = (label: string, on: boolean) =>
		setPicked((current) =>
			q.multiSelect ? (on ? [...current, label] : current.filter((l) => l !== label)) : on ? [label] : [],
		);
	return (
		<form className="question" onSubmit={submit}>
			{q.header && <span className="chip">{q.header}</span>}
			<CardText text={q.question} images={props.images} />
			{q.options.length > 0 && (
				<fieldset disabled={!editable} className="options">
					<legend className="visually-hidden">{q.multiSelect ? "Choose any" : "Choose one"}</legend>
					{q.options.map((option) => (
						<div key={option.label} className="option">
							<label className="choice">
								<input
									type={q.multiSelect ? "checkbox" : "radio"}
									name={groupName}
									value={option.label}
									checked={
										picked.includes(option.label) ||
										(props.given ? isChosen(props.given, option.label) : false)
									}
									onChange={(e) => toggle(option.label, e.target.checked)}
								/>
								<span>
									<strong className="option-label">{option.label}</strong>{" "}
									<Description text={option.description} images={props.images} />
								</span>
							</label>
							{option.preview && (
								<OptionPreview label={option.label} source={option.preview} images={props.images} />
							)}
						</div>
					))}
				</fieldset>
			)}
			{props.given ? (
				<Given given={props.given} />
			) : (
				editable && (
					<>
						<label className="written">
							{q.options.length > 0 ? "Or write your own answer" : "Your answer"}
							<textarea value={written} onChange={(e) => setWritten(e.target.value)} rows={2} />
						</label>
						<div className="row">
							<button
								type="submit"
								className="primary"
								disabled={props.busy || (!written.trim() && picked.length === 0)}
							>
								Answer
							</button>
							<button type="button" disabled={props.busy} onClick={() => props.cancel(index)}>
								Cancel question
							</button>
						</div>
					</>
				)
			)}
		</form>
	);
}

function isChosen(given: NonNullable<CardProps["given"]>, label: string): boolean {
	const a = given.answer;
	if (a.kind === "option") return a.answer === label;
	if (a.kind === "multi") return a.selected.includes(label);
	return false;
}

function SimpleCard(props: CardProps & { question: Exclude<Question, Questionnaire> }): ReactNode {
	const q = props.question;
	const [text, setText] = useState(q.method === "editor" ? (q.initial ?? "") : "");
	const [choice, setChoice] = useState<string | null>(null);
	const [groupName] = useState(() => `s-${Math.random().toString(36).slice(2, 8)}`);
	const editable = props.open && !props.given;
	const cancelButton = (
		<button type="button" disabled={props.busy} onClick={() => props.cancel(0)}>
			Cancel question
		</button>
	);
	const submit = (event: FormEvent) => {
		event.preventDefault();
		if (q.method === "select") {
			if (text.trim()) return props.answer(0, { kind: "written", text });
			return props.answer(0, { kind: "choice", choice });
		}
		props.answer(0, { kind: "written", text });
	};
	return (
		<form className="question" onSubmit={submit}>
			<CardText text={q.title} images={props.images} />
			{q.method === "confirm" && q.message && (
				<div className="card-body">
					<Markdown source={q.message} images={props.images} breaks />
				</div>
			)}
			{props.given && <Given given={props.given} />}
			{editable && q.method === "confirm" && (
				<div className="row">
					<button
						type="button"
						className="primary"
						disabled={props.busy}
						onClick={() => props.answer(0, { kind: "confirm", yes: true })}
					>
						Yes
					</button>
					<button
						type="button"
						disabled={props.busy}
						onClick={() => props.answer(0, { kind: "confirm", yes: false })}
					>
						No
					</button>
					{cancelButton}
				</div>
			)}
			{editable && q.method === "select" && (
				<>
					<fieldset className="options">
						<legend className="visually-hidden">Choose one</legend>
						{q.choices.map((c) => (
							<label key={c} className="choice">
								<input
									type="radio"
									name={groupName}
									value={c}
									checked={choice === c}
									onChange={() => setChoice(c)}
								/>
								<span>{c}</span>
							</label>
						))}
					</fieldset>
					<label className="written">
						Or write your own answer
						<textarea value={text} onChange={(e) => setText(e.target.value)} rows={2} />
					</label>
				</>
			)}
			{editable && q.method === "input" && (
				<label className="written">
					Your answer
					<input value={text} placeholder={q.placeholder} onChange={(e) => setText(e.target.value)} />
				</label>
			)}
			{editable && q.method === "editor" && (
				<label className="written">
					Your text
					<textarea value={text} onChange={(e) => setText(e.target.value)} rows={6} />
				</label>
			)}
			{editable && q.method !== "confirm" && (
				<div className="row">
					<button
						type="submit"
						className="primary"
						disabled={props.busy || (q.method === "select" && !choice && !text.trim())}
					>
						Answer
					</button>
					{cancelButton}
				</div>
			)}
		</form>
	);
}
