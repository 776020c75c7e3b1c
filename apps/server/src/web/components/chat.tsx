// Chat: the document's main Chat as it streams in, each message with the way into its thread, and the composer;
// an open thread beside it (docs/chat.md, Threads) with its root, its messages and a composer of its own. Retry on a
// failed reply is offered to the person who sent its message, in the main Chat and in threads alike.
import { type ReactNode, useEffect, useRef, useState } from "react";
import type { ChatModelState } from "../../live/events";
import { api, type MessageView } from "../api";
import { Composer } from "./composer";
import { Message } from "./message";

export function ChatPanel(props: {
	documentId: string;
	/** The main Chat's messages and those of threads the page loaded, by seq. */
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
	/** A thread's messages, loaded when it opens: kept with the rest. */
	onLoaded(messages: MessageView[]): void;
}): ReactNode {
	const [loadingOlder, setLoadingOlder] = useState(false);
	const [thread, setThread] = useState<string | null>(null);
	const older = async () => {
		setLoadingOlder(true);
		await props.onOlder().catch(() => {});
		setLoadingOlder(false);
	};
	const main = props.messages.filter((m) => !m.threadRoot);
	const end = useRef<HTMLLIElement>(null);
	const count = main.length;
	const last = main.at(-1)?.body.length ?? 0;
	useEffect(() => {
		// Keep the newest message in view as messages and streamed text arrive.
		if (count > 0 || last > 0) end.current?.scrollIntoView?.({ block: "nearest" });
	}, [count, last]);
	const byId = new Map(props.messages.map((m) => [m.id, m]));
	// Retry is the sender's: on a failed reply to a person's message they wrote (docs/chat.md, Retry).
	const retry = (m: MessageView) => {
		const asked = m.replyTo ? byId.get(m.replyTo) : undefined;
		const retriable =
			!props.archived &&
			m.role === "planner" &&
			m.status === "failed" &&
			asked?.role === "person" &&
			asked.authorLogin?.toLowerCase() === props.me.toLowerCase();
		return retriable ? { documentId: props.documentId, onRetried: () => props.onRetried(m.id) } : undefined;
	};
	const root = thread ? byId.get(thread) : undefined;
	return (
		<>
			<section className="chat" aria-label="Chat">
				<h2>Chat</h2>
				{props.more && (
					<button type="button" className="link-button" disabled={loadingOlder} onClick={older}>
						Show older messages
					</button>
				)}
				<ol className="messages" aria-live="polite">
					{main.length === 0 && <li className="muted">No messages yet.</li>}
					{main.map((m) => (
						<Message
							key={m.id}
							message={m}
							retry={retry(m)}
							onThread={
								m.role === "system" || (props.archived && !m.threadReplies)
									? undefined
									: () => setThread(m.id)
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
			{root && (
				<ThreadPanel
					key={root.id}
					root={root}
					messages={props.messages.filter((m) => m.threadRoot === root.id)}
					retry={retry}
					documentId={props.documentId}
					archived={props.archived}
					model={props.model}
					onPosted={props.onPosted}
					onLoaded={props.onLoaded}
					onClose={() => setThread(null)}
				/>
			)}
		</>
	);
}

/** An open thread: its root, its messages (loaded when it opens, and again when the page lost them), a composer. */
function ThreadPanel(props: {
	documentId: string;
	root: MessageView;
	messages: MessageView[];
	archived: boolean;
	model: ChatModelState;
	retry(m: MessageView): { documentId: string; onRetried(): void } | undefined;
	onPosted(message: MessageView): void;
	onLoaded(messages: MessageView[]): void;
	onClose(): void;
}): ReactNode {
	const { documentId, root, onLoaded } = props;
	const replies = root.threadReplies ?? 0;
	const [error, setError] = useState<string | null>(null);
	// Loaded once per count the root reports that the page does not hold: on opening, and after a reload of the
	// page's state dropped them; live events bring the rest.
	const missing = props.messages.length < replies;
	const asked = useRef(-1);
	useEffect(() => {
		if (!missing || asked.current === replies) return;
		asked.current = replies;
		const query = new URLSearchParams({ thread: root.id, limit: "200" });
		api<{ messages: MessageView[] }>("GET", `/api/documents/${documentId}/messages?${query}`)
			.then((page) => onLoaded(page.messages))
			.catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
	}, [missing, replies, documentId, root.id, onLoaded]);
	const author = root.role === "planner" ? "chopin" : (root.authorLogin ?? "someone");
	return (
		<section className="chat thread" aria-label="Thread">
			<div className="row">
				<h2>Thread on @{author}'s message</h2>
				<button type="button" className="link-button" onClick={props.onClose}>
					Close thread
				</button>
			</div>
			<ol className="messages" aria-live="polite">
				<Message message={root} />
				{props.messages.map((m) => (
					<Message key={m.id} message={m} retry={props.retry(m)} />
				))}
			</ol>
			{error && (
				<p className="refusal" role="alert">
					{error}
				</p>
			)}
			{props.archived ? (
				<p className="muted">This document is archived: its threads are read-only.</p>
			) : (
				<Composer documentId={documentId} model={props.model} thread={root.id} onPosted={props.onPosted} />
			)}
		</section>
	);
}
