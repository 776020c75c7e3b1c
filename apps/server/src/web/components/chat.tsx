// Chat: the document's messages as they stream in (people, the Planner's replies with Work details,
// images and failure lines, Chopin's notices), Retry on a failed reply for the person who sent its message,
// and the composer; an @chopin message the Planner cannot take is refused to its sender only, with the text
// kept in the composer. With the client's catalog the composer also offers its models, thinking levels and
// commands (capability-catalog).
import { type FormEvent, type KeyboardEvent, type ReactNode, useEffect, useRef, useState } from "react";
import type { ChatModelState } from "../../live/events";
import { ApiError, api, describeError, type MessageView } from "../api";
import { Markdown } from "../markdown";
import {
	AttachPicker,
	encodeFiles,
	MessageAttachments,
	modelReadsImages,
	type PickedFile,
	pickFiles,
} from "./attachments";
import { ModelPicker } from "./model-picker";

type ToolRow = MessageView["tools"][number];

export function ChatPanel(props: {
	documentId: string;
	messages: MessageView[];
	/** Whether older messages remain on the server. */
	more: boolean;
	archived: boolean;
	/** The signed-in person's login: Retry shows on failed replies to their own messages. */
	me: string;
	model: ChatModelState;
	onPosted(message: MessageView): void;
	/** A Retry the server took: the failed reply leaves Chat. */
	onRetried(messageId: string): void;
	onOlder(): Promise<void>;
}): ReactNode {
	const [loadingOlder, setLoadingOlder] = useState(false);
	const older = async () => {
		setLoadingOlder(true);
		await props.onOlder().catch(() => {});
		setLoadingOlder(false);
	};
	const end = useRef<HTMLLIElement>(null);
	const count = props.messages.length;
	const last = props.messages.at(-1)?.body.length ?? 0;
	useEffect(() => {
		// Keep the newest message in view as messages and streamed text arrive.
		if (count > 0 || last > 0) end.current?.scrollIntoView?.({ block: "nearest" });
	}, [count, last]);
	const byId = new Map(props.messages.map((m) => [m.id, m]));
	// Retry is the sender's: on a failed reply to a person's message they wrote (docs/chat.md, Retry).
	const retriable = (m: MessageView) => {
		const asked = m.replyTo ? byId.get(m.replyTo) : undefined;
		return (
			!props.archived &&
			m.role === "planner" &&
			m.status === "failed" &&
			asked?.role === "person" &&
			asked.authorLogin?.toLowerCase() === props.me.toLowerCase()
		);
	};
	return (
		<section className="chat" aria-label="Chat">
			<h2>Chat</h2>
			{props.more && (
				<button type="button" className="link-button" disabled={loadingOlder} onClick={older}>
					Show older messages
				</button>
			)}
			<ol className="messages" aria-live="polite">
				{props.messages.length === 0 && <li className="muted">No messages yet.</li>}
				{props.messages.map((m) => (
					<Message
						key={m.id}
						message={m}
						retry={
							retriable(m)
								? { documentId: props.documentId, onRetried: () => props.onRetried(m.id) }
								: undefined
						}
					/>
				))}
				<li ref={end} className="end" aria-hidden="true" />
			</ol>
			{props.archived ? (
				<p className="muted">This document is archived: Chat is read-only.</p>
			) : (
				<Composer documentId={props.documentId} model={props.model} onPosted={props.onPosted} />
			)}
		</section>
	);
}

function Message({
	message,
	retry,
}: {
	message: MessageView;
	retry?: { documentId: string; onRetried(): void };
}): ReactNode {
	const time = new Date(message.createdAt).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
	if (message.role === "system") {
		return (
			<li className="message notice" data-message-id={message.id}>
				<span className="muted">{time}</span> {message.body}
			</li>
		);
	}
	const author = message.role === "planner" ? "chopin" : (message.authorLogin ?? "someone");
	return (
		<li className={`message ${message.role}`} data-message-id={message.id} data-status={message.status}>
			<div className="meta">
				<strong>@{author}</strong> <span className="muted">{time}</span>
				{message.status === "streaming" && <span className="badge">replying…</span>}
			</div>
			{message.body && (
				<div className="body">
					<Markdown source={message.body} breaks />
				</div>
			)}
			{message.attachments && <MessageAttachments attachments={message.attachments} />}
			{message.tools.length > 0 && <WorkDetails tools={message.tools} />}
			{message.images.length > 0 && (
				<section className="gallery" aria-label="Generated images">
					{message.images.map((image) => (
						<figure key={image.path}>
							<a href={image.path} target="_blank" rel="noopener">
								<img src={`${image.path}?w=360`} alt={image.alt || "An image a tool made"} loading="lazy" />
							</a>
							<figcaption>
								<span className="badge">Generated</span> {image.caption}
							</figcaption>
						</figure>
					))}
				</section>
			)}
			{message.refusedImages?.map((r) => (
				<p key={`${r.before}:${r.reason}`} className="muted">
					{r.reason}
				</p>
			))}
			{message.status === "failed" && (
				<p className="failure" role="status">
					The reply failed{message.error ? `: ${message.error}` : "."}
				</p>
			)}
			{retry && <RetryButton messageId={message.id} {...retry} />}
		</li>
	);
}

/** Retry on a failed reply: the server takes the failed attempt out for everyone and runs the message again. */
function RetryButton(props: { documentId: string; messageId: string; onRetried(): void }): ReactNode {
	const [busy, setBusy] = useState(false);
	const [refusal, setRefusal] = useState<string | null>(null);
	const retry = async () => {
		setBusy(true);
		setRefusal(null);
		try {
			await api("POST", `/api/documents/${props.documentId}/messages/${props.messageId}/retry`);
			props.onRetried();
		} catch (e) {
			// Refused (the Planner is busy or not attached): the failed reply stays, and so does the button.
			setRefusal(e instanceof ApiError ? e.message : describeError(e));
			setBusy(false);
		}
	};
	return (
		<div className="row">
			<button type="button" disabled={busy} onClick={retry}>
				Retry
			</button>
			{refusal && (
				<p className="refusal" role="alert">
					{refusal}
				</p>
			)}
		</div>
	);
}

function WorkDetails({ tools }: { tools: ToolRow[] }): ReactNode {
	return (
		<details className="work-details">
			<summary>
				Work details ({tools.length} {tools.length === 1 ? "tool" : "tools"})
			</summary>
			<ol>
				{tools.map((row) => (
					<li key={row.toolCallId} data-status={row.status}>
						<div>
							<code>{row.name}</code>{" "}
							<span className={`badge status-${row.status}`}>
								{row.status === "failed" ? (row.error?.label ?? "Failed") : row.status}
							</span>
						</div>
						{row.input && <pre className="tool-input">{row.input}</pre>}
						{row.error ? (
							<pre className="tool-error">{row.error.message}</pre>
						) : (
							row.result !== undefined && <pre className="tool-result">{row.result}</pre>
						)}
					</li>
				))}
			</ol>
		</details>
	);
}

function Composer(props: {
	documentId: string;
	model: ChatModelState;
	onPosted(message: MessageView): void;
}): ReactNode {
	const [body, setBody] = useState("");
	const [refusal, setRefusal] = useState<string | null>(null);
	const [busy, setBusy] = useState(false);
	/** The index of the client's command the message runs, as the last report listed it; -1 for none. */
	const [commandAt, setCommandAt] = useState(-1);
	const commands = props.model.catalog?.commands ?? [];
	const command = commands[commandAt];
	/** Files to send with the message (attachments), in the order picked. */
	const [files, setFiles] = useState<PickedFile[]>([]);
	const readsImages = modelReadsImages(props.model);
	const pick = async (list: FileList) => {
		const { picked, refusals } = await pickFiles(list, files, readsImages);
		setFiles((now) => [...now, ...picked]);
		setRefusal(refusals.length ? refusals.join(" ") : null);
	};
	const send = async (event?: FormEvent) => {
		event?.preventDefault();
		if ((!body.trim() && !command) || busy) return;
		// The model may have changed since an image was picked: it is offered only while the model reads images.
		const unreadable = readsImages ? undefined : files.find((f) => f.image);
		if (unreadable) {
			setRefusal(
				`${unreadable.name} is an image, and the current model does not read images. Remove it to send.`,
			);
			return;
		}
		setBusy(true);
		setRefusal(null);
		try {
			const { message } = await api<{ message: MessageView }>(
				"POST",
				`/api/documents/${props.documentId}/messages`,
				command
					? { body, command: { name: command.name, kind: command.kind } }
					: { body, ...(files.length > 0 && { attachments: encodeFiles(files) }) },
			);
			props.onPosted(message);
			setBody("");
			setCommandAt(-1);
			setFiles([]);
		} catch (e) {
			// Refused (no Planner, say): shown to the sender only, and the text stays to send again.
			setRefusal(e instanceof ApiError ? e.message : describeError(e));
		} finally {
			setBusy(false);
		}
	};
	const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
		if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) send();
	};
	return (
		<form className="composer" onSubmit={send}>
			<ModelPicker documentId={props.documentId} state={props.model} />
			{commands.length > 0 && (
				<label>
					Command{" "}
					<select
						aria-label="Command"
						value={commandAt}
						onChange={(e) => setCommandAt(Number(e.target.value))}
					>
						<option value={-1}>None</option>
						{commands.map((c, i) => (
							// biome-ignore lint/suspicious/noArrayIndexKey: repeated commands stay listed, as reported.
							<option key={`${c.name}:${i}`} value={i} title={c.description}>
								/{c.name}
								{c.kind ? ` (${c.kind})` : ""}
							</option>
						))}
					</select>
				</label>
			)}
			<label htmlFor="composer-body">{command ? `Input for /${command.name}` : "Message"}</label>
			<textarea
				id="composer-body"
				value={body}
				onChange={(e) => setBody(e.target.value)}
				onKeyDown={onKeyDown}
				rows={3}
				placeholder="Write a message; mention @chopin to ask the Planner."
			/>
			{!command && (
				<AttachPicker
					files={files}
					readsImages={readsImages}
					disabled={busy}
					onPick={pick}
					onRemove={(key) => setFiles((now) => now.filter((f) => f.key !== key))}
				/>
			)}
			{refusal && (
				<p className="refusal" role="alert">
					{refusal}
				</p>
			)}
			<div className="row">
				<span className="muted">Ctrl+Enter sends</span>
				<button type="submit" className="primary" disabled={busy || (!body.trim() && !command)}>
					Send
				</button>
			</div>
		</form>
	);
}
