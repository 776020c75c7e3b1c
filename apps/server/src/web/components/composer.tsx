// Chat's composer: a message (to the main Chat or a thread), files with it, and with the client's catalog its
// models, thinking levels and commands (capability-catalog); a refusal is shown to the sender only, the text kept.
import { type FormEvent, type KeyboardEvent, type ReactNode, useState } from "react";
import type { ChatModelState } from "../../live/events";
import { ApiError, api, describeError, type MessageView } from "../api";
import { AttachPicker, encodeFiles, modelReadsImages, type PickedFile, pickFiles } from "./attachments";
import { ModelPicker } from "./model-picker";

export function Composer(props: {
	documentId: string;
	model: ChatModelState;
	/** Posts in this thread: commands are the main Chat's only. */
	thread?: string;
	onPosted(message: MessageView): void;
}): ReactNode {
	const [body, setBody] = useState("");
	// The thread's composer sits beside the main Chat's: each needs its own label target.
	const bodyId = props.thread ? "thread-composer-body" : "composer-body";
	const [refusal, setRefusal] = useState<string | null>(null);
	const [busy, setBusy] = useState(false);
	/** The index of the client's command the message runs, as the last report listed it; -1 for none. */
	const [commandAt, setCommandAt] = useState(-1);
	const commands = props.thread ? [] : (props.model.catalog?.commands ?? []);
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
					: {
							body,
							...(files.length > 0 && { attachments: encodeFiles(files) }),
							...(props.thread && { thread: props.thread }),
						},
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
			<label htmlFor={bodyId}>
				{command ? `Input for /${command.name}` : props.thread ? "Reply in thread" : "Message"}
			</label>
			<textarea
				id={bodyId}
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
