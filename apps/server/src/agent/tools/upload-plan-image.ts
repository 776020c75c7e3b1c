// upload_plan_image (decision-option-previews): an image the Planner made, stored as one of this document's own
// images by the same service upload_image uses (types by bytes, same bytes same path), over 1 MiB as a smaller
// copy; the result is the Markdown for an option's preview, a question or the plan, and Chat shows the image.
import {
	UPLOAD_PLAN_IMAGE_MAX_BYTES,
	type UploadPlanImageInput,
	type UploadPlanImageOutput,
	uploadPlanImageInputSchema,
} from "@chopin/agent-link";
import { z } from "zod";
import { imageMarkdown } from "../../images/service";
import { type HostToolDefinition, ToolInputError, zodIssue } from "./registry";

/** A larger image is stored as a smaller copy of itself, so it fits a document's images (spec: Option previews). */
export const PLAN_IMAGE_STORED_MAX_BYTES = 1024 * 1024;

export const uploadPlanImage: HostToolDefinition<UploadPlanImageInput> = {
	name: "upload_plan_image",
	description: `Store an image you made (PNG, JPEG, WebP or GIF, standard base64 of at most ${UPLOAD_PLAN_IMAGE_MAX_BYTES / 1024 / 1024} MiB) as one of this document's own images, with alt text of one line saying what it shows. Returns { path, markdown }: put the markdown in an option's preview, a question's body or the plan. The same bytes give the same path; an image over 1 MiB is stored as a smaller copy.`,
	inputSchema: z.toJSONSchema(uploadPlanImageInputSchema) as Record<string, unknown>,
	writes: true,
	feature: "decision-option-previews",
	parse(input) {
		const parsed = uploadPlanImageInputSchema.safeParse(input);
		if (!parsed.success) throw new ToolInputError(zodIssue(parsed.error));
		return parsed.data;
	},
	async run(args, ctx): Promise<UploadPlanImageOutput> {
		const bytes = new Uint8Array(Buffer.from(args.data, "base64"));
		const stored = await ctx.domain.images.store(ctx.documentId, bytes, {
			declaredMediaType: args.mimeType,
			maxBytes: PLAN_IMAGE_STORED_MAX_BYTES,
		});
		await ctx.imageStored?.(stored, args.alt);
		return { path: stored.path, markdown: imageMarkdown(args.alt, stored.path) };
	},
};
