/**
 * Shapes of host-tool-result.output the spec fixes: a failed call's error, a call the permission
 * policy refused, and the upload_plan_image tool's input and output.
 */
import { z } from "zod";
import { UPLOAD_PLAN_IMAGE_ALT_MAX, UPLOAD_PLAN_IMAGE_MAX_BYTES } from "../limits";
import { base64DecodedLength, isBase64 } from "../text";
import { chars } from "./fields";

/** A failed host call (isError: true): a tool that threw, invalid input, an unknown name, an ended turn. */
export const hostToolErrorOutputSchema = z.strictObject({ error: z.string() });
export type HostToolErrorOutput = z.infer<typeof hostToolErrorOutputSchema>;

/** A call Chopin's permission policy refused. */
export const executionDeniedOutputSchema = z.strictObject({
	type: z.literal("execution-denied"),
	reason: z.string().optional(),
});
export type ExecutionDeniedOutput = z.infer<typeof executionDeniedOutputSchema>;

export const UPLOAD_PLAN_IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"] as const;

/** upload_plan_image input: standard base64 of at most 16 MiB, and alt text of one line. */
export const uploadPlanImageInputSchema = z.strictObject({
	data: z
		.string()
		.refine(isBase64, { error: "must be standard base64" })
		.refine((data) => base64DecodedLength(data) <= UPLOAD_PLAN_IMAGE_MAX_BYTES, {
			error: `must decode to at most ${UPLOAD_PLAN_IMAGE_MAX_BYTES} bytes`,
		}),
	mimeType: z.enum(UPLOAD_PLAN_IMAGE_TYPES),
	alt: chars(1, UPLOAD_PLAN_IMAGE_ALT_MAX).refine((alt) => !/[\r\n]/.test(alt), {
		error: "must be one line",
	}),
});
export type UploadPlanImageInput = z.infer<typeof uploadPlanImageInputSchema>;

export const uploadPlanImageOutputSchema = z.strictObject({
	path: z.string().regex(/^\/images\/[0-9a-f]{64}\.[a-z0-9]+$/, { error: "must be /images/<sha256>.<ext>" }),
	markdown: z.string(),
});
export type UploadPlanImageOutput = z.infer<typeof uploadPlanImageOutputSchema>;
