// What a turn makes of the files its message carries (spec: Images and files in a turn). With attachments they go
// as turn.attachments (a fresh id each, base64 data), images only when the turn's model reads images; without it
// the text files are written into the prompt and each image is said in a line, so nothing is dropped silently.
import { type Attachment, codePointLength, cutToCodePoints } from "@chopin/agent-link";
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
	let budget = PROMPT_FILES_BUDGET;
	const written = files.map((file) => {
		const part = inPrompt(file, budget);
		budget -= jsonBytes(part);
		return part;
	});
	return { prompt: [prompt, ...written].join("\n\n") };
}

/**
 * How many bytes the files written into a prompt may take once the frame's JSON escapes them: a text file of
 * quotes or control characters grows up to six times, and the turn frame must stay within the 2 MiB frame with its
 * instructions and tools. A file past it is cut, and the prompt says so (nothing is dropped silently).
 */
export const PROMPT_FILES_BUDGET = 1_200_000;

function jsonBytes(text: string): number {
	return Buffer.byteLength(JSON.stringify(text)) - 2;
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

/**
 * A text file as <file name="notes.md">…</file>, cut to what is left of the budget; an image as a line the model
 * can tell the person about.
 */
function inPrompt(file: StoredAttachment, budget: number): string {
	if (file.kind === "image") {
		return `[The person also sent an image, ${file.name} (${file.mediaType}, ${file.bytes.length} bytes), that could not be given to you here.]`;
	}
	const open = `<file name="${escapeName(file.name)}">\n`;
	let text = utf8.decode(file.bytes);
	const whole = `${open}${text}\n</file>`;
	if (jsonBytes(whole) <= budget) return whole;
	// Cut in proportion until it fits (escaping is uneven, so a few rounds at most), never inside a character.
	const room = Math.max(0, budget - jsonBytes(open) - 400);
	for (let round = 0; round < 8 && jsonBytes(text) > room; round++) {
		const length = codePointLength(text);
		text = cutToCodePoints(text, Math.floor(((length * room) / jsonBytes(text)) * 0.98));
	}
	const shown = Buffer.byteLength(text);
	return `${open}${text}\n</file>\n[${file.name} is ${file.bytes.length} bytes; only its first ${shown} bytes fit in this turn.]`;
}

/** The name is an attribute value: its quotes and markup characters are escaped so the tag reads whole. */
function escapeName(name: string): string {
	return name.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
