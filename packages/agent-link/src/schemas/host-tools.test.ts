import { describe, expect, test } from "bun:test";
import { UPLOAD_PLAN_IMAGE_MAX_BYTES } from "../limits";
import {
	executionDeniedOutputSchema,
	hostToolErrorOutputSchema,
	uploadPlanImageInputSchema,
	uploadPlanImageOutputSchema,
} from "./host-tools";

describe("host tool outputs", () => {
	test("a failed call's output and a denied call's output", () => {
		expect(hostToolErrorOutputSchema.safeParse({ error: "The turn has ended." }).success).toBe(true);
		expect(hostToolErrorOutputSchema.safeParse({ error: "x", stack: "y" }).success).toBe(false);
		expect(executionDeniedOutputSchema.safeParse({ type: "execution-denied" }).success).toBe(true);
		expect(
			executionDeniedOutputSchema.safeParse({ type: "execution-denied", reason: "Policy." }).success,
		).toBe(true);
		expect(executionDeniedOutputSchema.safeParse({ type: "denied" }).success).toBe(false);
	});
});

describe("upload_plan_image", () => {
	const input = { data: "iVBORw0KGgo=", mimeType: "image/png", alt: "A diagram of the rollout" };

	test("the spec's input and output", () => {
		expect(uploadPlanImageInputSchema.safeParse(input).success).toBe(true);
		const sha = "a".repeat(64);
		const output = { path: `/images/${sha}.png`, markdown: `![A diagram](/images/${sha}.png)` };
		expect(uploadPlanImageOutputSchema.safeParse(output).success).toBe(true);
		expect(uploadPlanImageOutputSchema.safeParse({ ...output, path: "/tmp/x.png" }).success).toBe(false);
	});

	test("alt is required, one line of at most 200 characters", () => {
		expect(uploadPlanImageInputSchema.safeParse({ ...input, alt: "é".repeat(200) }).success).toBe(true);
		expect(uploadPlanImageInputSchema.safeParse({ ...input, alt: "a".repeat(201) }).success).toBe(false);
		expect(uploadPlanImageInputSchema.safeParse({ ...input, alt: "" }).success).toBe(false);
		expect(uploadPlanImageInputSchema.safeParse({ ...input, alt: "two\nlines" }).success).toBe(false);
	});

	test("PNG, JPEG, WebP or GIF, at most 16 MiB decoded", () => {
		expect(uploadPlanImageInputSchema.safeParse({ ...input, mimeType: "image/avif" }).success).toBe(false);
		// 16 MiB is 3n + 1 bytes: n full quads, then "AA" for the last byte (unpadded).
		const quads = "A".repeat(Math.floor(UPLOAD_PLAN_IMAGE_MAX_BYTES / 3) * 4);
		expect(uploadPlanImageInputSchema.safeParse({ ...input, data: `${quads}AA` }).success).toBe(true);
		expect(uploadPlanImageInputSchema.safeParse({ ...input, data: `${quads}AAA` }).success).toBe(false);
		expect(uploadPlanImageInputSchema.safeParse({ ...input, data: "not base64!" }).success).toBe(false);
	});
});
