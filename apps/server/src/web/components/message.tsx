// One Chat message as the page shows it: a person's, the Planner's reply with Work details, images and its
// failure line (Retry for the person who sent the message), or Chopin's notice; and the way into its thread.
import { type ReactNode, useState } from "react";
import { ApiError, api, describeError, type MessageView } from "../api";
import { Markdown } from "../markdown";
import { MessageAttachments } from "./attachments";

type ToolRow = MessageView["tools"][number];

export function Message({
	message,
	retry,
	onThread,
}: {
	message: MessageView;
	retry?: { documentId: string; onRetried(): void };
	/** Opens the message's thread: offered on the main Chat's messages, never on a notice or inside a thread. */
	onThread?: () => void;
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
			{onThread && (
				<button type="button" className="link-button thread-link" onClick={onThread}>
					{message.threadReplies
						? `${message.threadReplies} ${message.threadReplies === 1 ? "reply" : "replies"} in thread`
						: "Reply in thread"}
				</button>
			)}
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
