// Files a person sends with a Chat message (spec: Images and files in a turn): the kind decided from the bytes
// (a PNG, JPEG, WebP or GIF image, else UTF-8 text kept as text/plain, never HTML or SVG), the name cleaned to a
// label, and the caps (at most 20 files, CHAT_ATTACHMENT_MAX_BYTES each, CHAT_ATTACHMENT_MAX_TOTAL_BYTES in all).
import {
	ATTACHMENT_FILE_TYPE,
	ATTACHMENT_NAME_MAX,
	ATTACHMENTS_MAX,
	ATTACHMENTS_TOTAL_BYTES,
	cutToCodePoints,
} from "@chopin/agent-link";
import { sniffImage } from "../images/sniff";
import { ChatError } from "./errors";

/** A deployment's caps; the spec's are the defaults (and the most HARNESS=remote allows). */
export interface AttachmentCaps {
	/** The most bytes one file may hold. */
	maxBytes: number;
	/** The most bytes all of a message's files may hold together. */
	maxTotalBytes: number;
}

export const SPEC_ATTACHMENT_CAPS: AttachmentCaps = {
	maxBytes: ATTACHMENTS_TOTAL_BYTES,
	maxTotalBytes: ATTACHMENTS_TOTAL_BYTES,
};

/** A file as a person sent it: a name they chose and its bytes. */
export interface NewAttachment {
	name: string;
	bytes: Uint8Array;
}

export type AttachmentKind = "image" | "file";

/** A file as Chat keeps it: a clean name, its kind and the type the bytes showed. */
export interface CheckedAttachment {
	name: string;
	kind: AttachmentKind;
	mediaType: string;
	bytes: Uint8Array;
}

/** The image types a turn can carry; the sniffer knows more (AVIF, BMP, ICO) that a model is not given. */
const SENT_IMAGE_TYPES = new Set(["png", "jpeg", "webp", "gif"]);

/** Checks every file, in order, and refuses the whole message on the first file that is wrong (a ChatError). */
export function checkAttachments(files: readonly NewAttachment[], caps: AttachmentCaps): CheckedAttachment[] {
	if (files.length > ATTACHMENTS_MAX) {
		throw new ChatError(
			"too-many-attachments",
			`A message can carry at most ${ATTACHMENTS_MAX} files; this one has ${files.length}.`,
			"Send the rest with another message.",
		);
	}
	let total = 0;
	const checked = files.map((file) => {
		const name = cleanAttachmentName(file.name);
		if (file.bytes.length > caps.maxBytes) {
			throw new ChatError(
				"attachment-too-large",
				`${name} is ${file.bytes.length} bytes; a file can be at most ${caps.maxBytes}.`,
				undefined,
				413,
			);
		}
		total += file.bytes.length;
		return { name, ...kindOf(name, file.bytes), bytes: file.bytes };
	});
	if (total > caps.maxTotalBytes) {
		throw new ChatError(
			"attachments-too-large",
			`These files hold ${total} bytes in all; a message can carry at most ${caps.maxTotalBytes}.`,
			"Send some of them with another message.",
			413,
		);
	}
	return checked;
}

/**
 * A label, not a path: the last segment after any / or \, without control characters (C0, DEL, C1) or the
 * spaces around it, cut to 255 characters. Nothing left is refused.
 */
export function cleanAttachmentName(raw: string): string {
	const base = raw.split(/[/\\]/).at(-1) ?? "";
	// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes.
	const name = cutToCodePoints(base.replace(/[\u0000-\u001f\u007f-\u009f]/g, "").trim(), ATTACHMENT_NAME_MAX);
	if (!name) {
		throw new ChatError(
			"attachment-name-invalid",
			`${JSON.stringify(raw.slice(0, 60))} is not a file name.`,
			"Give the file a name.",
		);
	}
	return name;
}

/** From the bytes only: an image Chat sends, else text/plain when the bytes are UTF-8 text, else refused. */
function kindOf(name: string, bytes: Uint8Array): { kind: AttachmentKind; mediaType: string } {
	const image = sniffImage(bytes);
	if (image && SENT_IMAGE_TYPES.has(image.type)) {
		if (image.truncated) {
			throw new ChatError("attachment-unreadable", `${name} is a ${image.type} image that is cut short.`);
		}
		return { kind: "image", mediaType: image.mediaType };
	}
	if (!image && isText(bytes)) return { kind: "file", mediaType: ATTACHMENT_FILE_TYPE };
	throw new ChatError(
		"attachment-unsupported",
		`${name} is neither a PNG, JPEG, WebP or GIF image nor a UTF-8 text file.`,
		"Send images and text files only.",
		415,
	);
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Valid UTF-8 with no NUL: a NUL is what marks a binary file that happens to decode. */
function isText(bytes: Uint8Array): boolean {
	if (bytes.includes(0)) return false;
	try {
		utf8.decode(bytes);
		return true;
	} catch {
		return false;
	}
}

/** A message that cannot carry its files (a command, say): refused whole rather than sent without them. */
export function attachmentsRefused(message: string): ChatError {
	return new ChatError("attachments-not-taken", message);
}
