/** The handshake: the client's attach and the server's attached or refused. */
import { z } from "zod";
import { refusalCodeSchema } from "../closing";
import {
	CHECKOUT_BRANCH_MAX,
	CHECKOUT_HEAD_MAX,
	CHECKOUT_ORIGIN_MAX,
	DOCUMENT_MAX,
	FEATURES_MAX,
	IDENTIFIER_PATTERN,
	REPOSITORY_MAX,
	URL_MAX,
} from "../limits";
import { PROTOCOL_VERSION } from "../protocol";
import { chars, idString, noteString } from "./fields";

export const checkoutSchema = z.strictObject({
	origin: chars(0, CHECKOUT_ORIGIN_MAX).optional(),
	branch: chars(0, CHECKOUT_BRANCH_MAX).optional(),
	head: chars(0, CHECKOUT_HEAD_MAX).optional(),
});

/**
 * version is any positive integer, not just 1: a client speaking another version is answered
 * with refused unsupported-version (4426), which the server can only do once attach parses.
 */
export const attachSchema = z.strictObject({
	type: z.literal("attach"),
	version: z.int().positive(),
	document: chars(1, DOCUMENT_MAX),
	checkout: checkoutSchema.optional(),
});
export type Attach = z.infer<typeof attachSchema>;

/** owner/name: one slash with something on each side. */
const repositoryString = chars(1, REPOSITORY_MAX).regex(/^[^/]+\/[^/]+$/, { error: "must be owner/name" });

export const featureNameSchema = z.string().regex(IDENTIFIER_PATTERN, {
	error: "must be an ASCII letter or digit, then up to 127 of A-Z a-z 0-9 . _ -",
});

export const attachedDocumentSchema = z.strictObject({
	id: idString,
	title: noteString,
	repository: repositoryString,
	url: chars(0, URL_MAX).optional(),
});

/**
 * features lists names, not only the ones this package knows: a newer server may grant a name a
 * newer client asked for. grantedFeatures() keeps what this side asked for.
 */
export const attachedSchema = z.strictObject({
	type: z.literal("attached"),
	version: z.literal(PROTOCOL_VERSION),
	document: attachedDocumentSchema,
	features: z.array(featureNameSchema).max(FEATURES_MAX).optional(),
});
export type Attached = z.infer<typeof attachedSchema>;

/** retry: true is set only on unavailable, the one refusal that is not a final decision. */
export const refusedSchema = z
	.strictObject({
		type: z.literal("refused"),
		code: refusalCodeSchema,
		message: noteString,
		retry: z.boolean().optional(),
	})
	.check((ctx) => {
		if (ctx.value.retry === true && ctx.value.code !== "unavailable") {
			ctx.issues.push({
				code: "custom",
				path: ["retry"],
				message: "may be true only when code is unavailable",
				input: ctx.value.retry,
			});
		}
	});
export type Refused = z.infer<typeof refusedSchema>;
