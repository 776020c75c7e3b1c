// Planner backend variables for `chopin connect`: --env KEY=VALUE, --env-file <path> (whose values never travel in
// argv), and the warning for values too short to mask.
import { readFileSync } from "node:fs";
import { MIN_SECRET_LENGTH } from "@chopin/agent-link/redact";
import { z } from "zod";
import type { CliContext } from "../program/context";
import { CliError } from "../program/errors";
import { codedIssue } from "../program/options";
import { envKeySchema } from "./machine-config";

/** One --env entry, checked: KEY=VALUE with a variable name that is not CHOPIN_'s. */
export const envEntrySchema = z.string().transform((entry, ctx): [string, string] => {
	const eq = entry.indexOf("=");
	const key = eq < 0 ? entry : entry.slice(0, eq);
	if (eq <= 0) {
		codedIssue(
			ctx,
			"env-invalid",
			`--env ${JSON.stringify(entry)} is not KEY=VALUE.`,
			"Write it as --env NAME=value.",
		);
		return z.NEVER;
	}
	if (key.toUpperCase().startsWith("CHOPIN_")) {
		codedIssue(
			ctx,
			"env-reserved",
			`--env ${key} is reserved: the connector sets CHOPIN_ variables itself.`,
			"Use a name that does not start with CHOPIN_.",
		);
		return z.NEVER;
	}
	const checked = envKeySchema.safeParse(key);
	if (!checked.success) {
		codedIssue(
			ctx,
			"env-invalid",
			`--env ${JSON.stringify(key)} is not a valid variable name.`,
			"Use letters, digits and _, not starting with a digit.",
		);
		return z.NEVER;
	}
	return [key, entry.slice(eq + 1)];
});

/**
 * KEY=VALUE lines; blank lines and `#` comments are skipped, an `export ` prefix is allowed, and one pair of
 * matching quotes around the value is taken off. Nothing is expanded or unescaped: the value is what is written.
 * A file that cannot be read is env-file-unreadable; a bad line is env-invalid or env-reserved naming file:line
 * (never the value).
 */
export function readEnvFile(path: string): [string, string][] {
	let text: string;
	try {
		text = readFileSync(path, "utf8");
	} catch (error) {
		const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
		throw new CliError(
			"env-file-unreadable",
			`--env-file ${path} cannot be read (${reason}).`,
			"Name a readable file of KEY=VALUE lines (keep it private: chmod 600).",
		);
	}
	const entries: [string, string][] = [];
	const lines = text.split(/\r?\n/);
	for (const [index, raw] of lines.entries()) {
		const line = raw.trim();
		if (line === "" || line.startsWith("#")) continue;
		const where = `${path}:${index + 1}`;
		const body = line.startsWith("export ") ? line.slice(7).trimStart() : line;
		const eq = body.indexOf("=");
		if (eq <= 0) {
			throw new CliError(
				"env-invalid",
				`--env-file ${where} is not KEY=VALUE.`,
				"Write each line as NAME=value.",
			);
		}
		const key = body.slice(0, eq).trim();
		if (key.toUpperCase().startsWith("CHOPIN_")) {
			throw new CliError(
				"env-reserved",
				`--env-file ${where}: ${key} is reserved: the connector sets CHOPIN_ variables itself.`,
				"Use a name that does not start with CHOPIN_.",
			);
		}
		if (!envKeySchema.safeParse(key).success) {
			throw new CliError(
				"env-invalid",
				`--env-file ${where}: ${JSON.stringify(key)} is not a valid variable name.`,
				"Use letters, digits and _, not starting with a digit.",
			);
		}
		entries.push([key, unquote(body.slice(eq + 1).trim())]);
	}
	return entries;
}

function unquote(value: string): string {
	const first = value[0];
	if (value.length >= 2 && (first === '"' || first === "'") && value.endsWith(first))
		return value.slice(1, -1);
	return value;
}

/** Values too short to mask (createRedactor) would show in logs and backend output: said by name, never value. */
export function warnUnmaskable(ctx: CliContext, env: Record<string, string>): void {
	for (const [key, value] of Object.entries(env)) {
		if (value.length === 0 || value.length >= MIN_SECRET_LENGTH) continue;
		ctx.stderr.write(
			`warning: ${key}'s value is shorter than ${MIN_SECRET_LENGTH} characters, so chopin cannot mask it in logs and backend output; do not use it for a secret.\n`,
		);
	}
}
