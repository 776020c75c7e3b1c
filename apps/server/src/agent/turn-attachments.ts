// What a turn makes of the files its message carries (spec: Images and files in a turn). With attachments they go
// as turn.attachments (a fresh id each, base64 data), images only when the turn's model reads images; without it
// the text files are written into the prompt and each image is said in a line, so nothing is dropped silently.
import type { Attachment } from "@chopin/agent-link";
import type { StoredAttachment } from "../chat/attachment-rows";
import type { ReportedCatalog } from "./catalog";

/** The prompt and attachments a turn frame carries. */
export interface TurnFiles {
	prompt: string;
	attachments?: Attachment[];
}

/**
 * Whether the model reads images: the model the turn names, or the catalog's default when it names none, lists
 * image in its inputTypes. No catalog, no inputTypes or an unlisted model read as text only.
 */
export function readsImages(catalog: ReportedCatalog | undefined, model: string | undefined): boolean {
	const id = model ?? catalog?.defaultModel?.id;
	if (!catalog || id === undefined) return false;
	return catalog.model(id)?.inputTypes?.includes("image") ?? false;
}

export function turnFiles(
	prompt: string,
	files: readonly StoredAttachment[],
	options: { feature: boolean; readsImages: boolean },
): TurnFiles {
	if (files.length === 0) return { prompt };
	if (options.feature) {
		// The spec keeps prompt as the message's own text here; an image the model cannot read is not sent.
		const sent = files.filter((file) => file.kind === "file" || options.readsImages);
		return sent.length === 0 ? { prompt } : { prompt, attachments: sent.map(toAttachment) };
	}
	return { prompt: [prompt, ...files.map(inPrompt)].join("\n\n") };
}

function toAttachment(file: StoredAttachment): Attachment {
	const common = {
		id: `a-${crypto.randomUUID()}`,
		name: file.name,
		size: file.bytes.length,
		data: Buffer.from(file.bytes).toString("base64"),
	};
	return file.kind === "image"
		? {
				...common,
				kind: "image",
				mediaType: file.mediaType as Extract<Attachment, { kind: "image" }>["mediaType"],
			}
		: { ...common, kind: "file", mediaType: "text/plain" };
}

const utf8 = new TextDecoder();

/** A text file as <file name="notes.md">…</file>; an image as a line the model can tell the person about. */
function inPrompt(file: StoredAttachment): string {
	if (file.kind === "image") {
		return `[The person also sent an image, ${file.name} (${file.mediaType}, ${file.bytes.length} bytes), that could not be given to you here.]`;
	}
	return `<file name="${escapeName(file.name)}">\n${utf8.decode(file.bytes)}\n</file>`;
}

/** The name is an attribute value: its quotes and markup characters are escaped so the tag reads whole. */
function escapeName(name: string): string {
	return name.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
