// Editing a document's source, for writers: the whole Markdown in a text area, saved at the revision it was
// read at (someone else's change in between is refused, not overwritten), and images added from files.
import { type ReactNode, useRef, useState } from "react";
import { ApiError, api, type DocumentPayload, describeError } from "../api";

export function SourceEditor(props: { payload: DocumentPayload }): ReactNode {
	const { document } = props.payload;
	const [editing, setEditing] = useState<{ source: string; revision: number } | null>(null);
	const [note, setNote] = useState<string | null>(null);
	const [busy, setBusy] = useState(false);
	const area = useRef<HTMLTextAreaElement>(null);

	if (!editing) {
		return (
			<div className="row">
				<button
					type="button"
					onClick={() => setEditing({ source: document.source, revision: document.revision })}
				>
					Edit source
				</button>
			</div>
		);
	}
	const save = async () => {
		setBusy(true);
		setNote(null);
		try {
			await api("PUT", `/api/documents/${document.id}/source`, editing);
			setEditing(null);
		} catch (e) {
			setNote(
				e instanceof ApiError && e.code === "revision-conflict"
					? "Someone changed the document since you opened the editor. Copy your text, cancel, and edit again."
					: describeError(e),
			);
		} finally {
			setBusy(false);
		}
	};
	const addImage = async (file: File | undefined) => {
		if (!file) return;
		setBusy(true);
		setNote(null);
		try {
			const alt = file.name.replace(/\.[^.]*$/, "").slice(0, 200) || "Image";
			const { markdown } = await api<{ markdown: string }>(
				"POST",
				`/api/documents/${document.id}/images?${new URLSearchParams({ alt })}`,
				file,
			);
			const at = area.current?.selectionStart ?? editing.source.length;
			setEditing({
				...editing,
				source: `${editing.source.slice(0, at)}${markdown}${editing.source.slice(at)}`,
			});
		} catch (e) {
			setNote(describeError(e));
		} finally {
			setBusy(false);
		}
	};
	return (
		<div className="source-editor stack">
			<label>
				Source (Markdown)
				<textarea
					ref={area}
					value={editing.source}
					onChange={(e) => setEditing({ ...editing, source: e.target.value })}
					rows={16}
				/>
			</label>
			<label>
				Add an image{" "}
				<input
					type="file"
					accept="image/png,image/jpeg,image/webp,image/gif"
					onChange={(e) => addImage(e.target.files?.[0])}
				/>
			</label>
			{note && <p role="alert">{note}</p>}
			<div className="row">
				<button type="button" className="primary" disabled={busy} onClick={save}>
					Save
				</button>
				<button type="button" disabled={busy} onClick={() => setEditing(null)}>
					Cancel
				</button>
			</div>
		</div>
	);
}
