// Zod pieces for row schemas: how booleans and JSON come back from the store on both databases.
import { z } from "zod";

/** An INTEGER 0/1 column (or a boolean expression, which the store also returns as 0/1) as a boolean. */
export const dbBoolean = z.union([z.literal(0), z.literal(1)]).transform((v) => v === 1);

/** A TEXT column holding JSON, parsed and then checked against the schema. */
export function dbJson<S extends z.ZodType>(schema: S) {
	return z
		.string()
		.transform((text, ctx) => {
			try {
				return JSON.parse(text) as unknown;
			} catch {
				ctx.addIssue({ code: "custom", message: "is not valid JSON" });
				return z.NEVER;
			}
		})
		.pipe(schema);
}
