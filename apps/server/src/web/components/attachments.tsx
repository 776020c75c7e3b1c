// Files in Chat (attachments): a message's files as Chat shows them (images as thumbnails, text files by name),
// and the composer's picker: files chosen, listed before sending, removable; an image only when the current
// model reads images (the catalog's inputTypes). The server decides every kind again from the bytes.
import { type ReactNode, useId } from "react";
import type { ChatModelState } from "../../live/events";
import type { MessageView } from "../api";

type MessageAttachment = NonNullable<MessageView["attachments"]>[number];

/** The spec's bounds: at most 20 files and 1,048,576 bytes together (the server may set lower caps). */
export const MAX_FILES = 20;
export const MAX_TOTAL_BYTES = 1_048_576;

/** A file picked in the composer, with what its first bytes say it is. */
export interface PickedFile {
	key: string;
	name: string;
	size: number;
	image: boolean;
	bytes: Uint8Array;
}

export function MessageAttachments({ attachments }: { attachments: MessageAttachment[] }): ReactNode {
	return (
		<ul className="attachments" aria-label="Attached files">
			{attachments.map((file) => (
				<li key={file.index} data-kind={file.kind}>
					{file.kind === "image" ? (
						<a href={file.path} target="_blank" rel="noopener">
							<img className="thumbnail" src={file.path} alt={file.name} loading="lazy" />
						</a>
					) : (
						<a href={file.path} download={file.name}>
							{file.name}
						</a>
					)}{" "}
					<span className="muted">{formatSize(file.size)}</span>
				</li>
			))}
		</ul>
	);
}

/** Whether the model the next turn runs (the person's choice, else the default) lists image among its inputs. */
export function modelReadsImages(state: ChatModelState): boolean {
	const catalog = state.catalog;
	const id = state.choice.model ?? catalog?.default?.id;
	if (!catalog || id === undefined) return false;
	return catalog.models.find((m) => m.id === id)?.inputTypes.includes("image") ?? false;
}

/** Reads picked files; an image the model cannot read, or one past the bounds, is left out with a sentence why. */
export async function pickFiles(
	list: FileList,
	already: readonly PickedFile[],
	readsImages: boolean,
): Promise<{ picked: PickedFile[]; refusals: string[] }> {
	const picked: PickedFile[] = [];
	const refusals: string[] = [];
	let total = already.reduce((sum, f) => sum + f.size, 0);
	for (const file of Array.from(list)) {
		const bytes = new Uint8Array(await file.arrayBuffer());
		const image = isImage(bytes);
		if (image && !readsImages) {
			refusals.push(`${file.name} is an image, and the current model does not read images.`);
		} else if (already.length + picked.length >= MAX_FILES) {
			refusals.push(`${file.name} was not added: a message carries at most ${MAX_FILES} files.`);
		} else if (total + bytes.length > MAX_TOTAL_BYTES) {
			refusals.push(`${file.name} was not added: a message's files hold at most 1 MiB together.`);
		} else {
			total += bytes.length;
			picked.push({ key: crypto.randomUUID(), name: file.name, size: bytes.length, image, bytes });
		}
	}
	return { picked, refusals };
}

/** The files as the Chat API takes them: a name and the bytes as base64. */
export function encodeFiles(files: readonly PickedFile[]): { name: string; data: string }[] {
	return files.map((f) => ({ name: f.name, data: toBase64(f.bytes) }));
}

export function AttachPicker(props: {
	files: PickedFile[];
	readsImages: boolean;
	disabled: boolean;
	onPick(list: FileList): void;
	onRemove(key: string): void;
}): ReactNode {
	const id = useId();
	return (
		<div className="attach">
			<label htmlFor={id}>{props.readsImages ? "Attach images or text files" : "Attach text files"}</label>
			<input
				id={id}
				type="file"
				multiple
				disabled={props.disabled}
				onChange={(e) => {
					if (e.target.files?.length) props.onPick(e.target.files);
					e.target.value = "";
				}}
			/>
			{props.files.length > 0 && (
				<ul className="attachments picked" aria-label="Files to send">
					{props.files.map((f) => (
						<li key={f.key} data-kind={f.image ? "image" : "file"}>
							{f.name} <span className="muted">{formatSize(f.size)}</span>{" "}
							<button
								type="button"
								className="link-button"
								aria-label={`Remove ${f.name}`}
								onClick={() => props.onRemove(f.key)}
							>
								Remove
							</button>
						</li>
					))}
				</ul>
			)}
		</div>
	);
}

/** PNG, JPEG, WebP or GIF by their first bytes, as the server decides it. */
function isImage(b: Uint8Array): boolean {
	const ascii = (at: number, n: number) => String.fromCharCode(...b.subarray(at, at + n));
	return (
		(b[0] === 0x89 && ascii(1, 3) === "PNG") ||
		(b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) ||
		(ascii(0, 4) === "RIFF" && ascii(8, 4) === "WEBP") ||
		ascii(0, 6) === "GIF87a" ||
		ascii(0, 6) === "GIF89a"
	);
}

function toBase64(bytes: Uint8Array): string {
	let binary = "";
	for (let i = 0; i < bytes.length; i += 0x8000)
		binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
	return btoa(binary);
}

function formatSize(bytes: number): string {
	if (bytes < 1024) return `${bytes} B`;
	return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
