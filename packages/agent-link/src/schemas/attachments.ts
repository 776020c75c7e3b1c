/** Images and files in a turn (attachments): what a person sent with the message a turn answers. */
import { z } from "zod";
import { ATTACHMENT_NAME_MAX, ATTACHMENTS_MAX, ATTACHMENTS_TOTAL_BYTES } from "../limits";
import { base64DecodedLength, isBase64 } from "../text";
import { chars, count, idString } from "./fields";

export const ATTACHMENT_IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"] as const;
export const ATTACHMENT_FILE_TYPE = "text/plain";

/** A label, not a path: no folder separators and no control characters (C0, DEL, C1). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const NAME_FORBIDDEN = /[/\\\u0000-\u001f\u007f-\u009f]/;

export const attachmentNameSchema = chars(1, ATTACHMENT_NAME_MAX).refine(
	(name) => !NAME_FORBIDDEN.test(name),
	{
		error: "must be a file name with no folder and no control characters",
	},
);

const common = {
	id: idString,
	name: attachmentNameSchema,
	size: count.max(ATTACHMENTS_TOTAL_BYTES),
	data: z.string().refine(isBase64, { error: "must be standard base64" }),
};

function sizeMatchesData(ctx: z.core.ParsePayload<{ size: number; data: string }>): void {
	if (base64DecodedLength(ctx.value.data) !== ctx.value.size) {
		ctx.issues.push({
			code: "custom",
			path: ["size"],
			message: "must be the number of bytes data decodes to",
			input: ctx.value.size,
		});
	}
}

export const imageAttachmentSchema = z
	.strictObject({ ...common, kind: z.literal("image"), mediaType: z.enum(ATTACHMENT_IMAGE_TYPES) })
	.check(sizeMatchesData);
export const fileAttachmentSchema = z
	.strictObject({ ...common, kind: z.literal("file"), mediaType: z.literal(ATTACHMENT_FILE_TYPE) })
	.check(sizeMatchesData);

export const attachmentSchema = z.discriminatedUnion("kind", [imageAttachmentSchema, fileAttachmentSchema]);
export type Attachment = z.infer<typeof attachmentSchema>;

/** At most 20 files, together at most 1,048,576 bytes before base64. */
export const attachmentsSchema = z
	.array(attachmentSchema)
	.max(ATTACHMENTS_MAX)
	.check((ctx) => {
		const total = ctx.value.reduce((sum, attachment) => sum + attachment.size, 0);
		if (total > ATTACHMENTS_TOTAL_BYTES) {
			ctx.issues.push({
				code: "custom",
				message: `must hold at most ${ATTACHMENTS_TOTAL_BYTES} bytes in all (these hold ${total})`,
				input: ctx.value,
			});
		}
	});
