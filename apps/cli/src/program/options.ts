// Turns commander's raw option values into a command's typed options through its zod schema, keeping each error's code.
import { z } from "zod";
import { CliError, type CliErrorCode, isCliErrorCode } from "./errors";

/**
 * A zod transform around a function that throws CliError: the error becomes an issue that
 * carries its code and hint, so one schema both validates and explains.
 */
export function viaCliError<T>(fn: (value: string) => T) {
	return z.string().transform((value, ctx): T => {
		try {
			return fn(value);
		} catch (error) {
			if (!(error instanceof CliError)) throw error;
			ctx.addIssue({
				code: "custom",
				message: error.message,
				params: { code: error.code, hint: error.hint },
			});
			return z.NEVER;
		}
	});
}

/** Adds a coded issue from inside a superRefine or transform. */
export function codedIssue<T>(
	ctx: z.core.$RefinementCtx<T>,
	code: CliErrorCode,
	message: string,
	hint?: string,
	path?: PropertyKey[],
): void {
	ctx.addIssue({ code: "custom", message, params: { code, hint }, ...(path ? { path } : {}) });
}

/** Parses raw options; the first issue becomes a CliError (its own code, or option-invalid naming the option). */
export function parseOptions<T extends z.ZodType>(schema: T, raw: unknown, command: string): z.output<T> {
	const parsed = schema.safeParse(raw);
	if (parsed.success) return parsed.data;
	const issue = parsed.error.issues[0]!;
	const params = (issue as { params?: { code?: unknown; hint?: unknown } }).params;
	const hint = typeof params?.hint === "string" ? params.hint : `Run \`chopin ${command} --help\` for usage.`;
	if (typeof params?.code === "string" && isCliErrorCode(params.code)) {
		return fail(new CliError(params.code, issue.message, hint));
	}
	const key = issue.path.find((part) => typeof part === "string");
	const option =
		typeof key === "string" ? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : "An option";
	return fail(
		new CliError("option-invalid", `${option} ${issue.message.replace(/^Invalid input: /, "")}.`, hint),
	);
}

function fail(error: CliError): never {
	throw error;
}
