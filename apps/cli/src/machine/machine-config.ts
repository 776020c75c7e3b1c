// <config>/machine.json: what this machine serves (server, checkouts, ACP and Planner commands), 0600 because --env values may be secrets.
import { posix, win32 } from "node:path";
import { z } from "zod";
import { recordChecked } from "../local/checked-files";
import { readJsonFile, writeJsonAtomic } from "../local/files";
import { type CliPaths, ensurePrivateDir } from "../local/paths";
import { commandWordsSchema } from "../program/command-line";
import { storedOriginSchema } from "../server-link/server-origin";

const absolutePath = z
	.string()
	.min(1)
	.refine((p) => posix.isAbsolute(p) || win32.isAbsolute(p), "must be an absolute path");

/** `owner/name`, as GitHub spells repositories. */
export const repositorySchema = z
	.string()
	.regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, "must be owner/name")
	.refine((r) => !r.split("/").some((part) => part === "." || part === ".."), "must be owner/name");

/** An environment variable name a Planner backend may be given (CHOPIN_* are the connector's own). */
export const envKeySchema = z
	.string()
	.regex(
		/^[A-Za-z_][A-Za-z0-9_]*$/,
		"must be a variable name (letters, digits, _; not starting with a digit)",
	)
	.refine((key) => !key.toUpperCase().startsWith("CHOPIN_"), "CHOPIN_ variables are set by the connector");

/** A document as --planner takes it: an id or its Chopin URL (agent-connection.md: at most 2048 characters). */
export const documentRefSchema = z
	.string()
	.trim()
	.min(1, "is empty")
	.max(2048, "is longer than 2048 characters");

export const checkoutSchema = z.strictObject({
	path: absolutePath,
	repository: repositorySchema,
	/** The origin URL without credentials. */
	origin: z.string().min(1),
	branch: z.string().min(1).optional(),
});

export const plannerSchema = z.strictObject({
	command: commandWordsSchema,
	agent: z.string().min(1).max(100).optional(),
	env: z.record(envKeySchema, z.string()).default({}),
	documents: z
		.array(z.strictObject({ document: documentRefSchema, checkout: absolutePath.optional() }))
		.default([]),
	sandbox: z
		.strictObject({ enabled: z.boolean().default(true), write: z.array(absolutePath).default([]) })
		.default({ enabled: true, write: [] }),
});

export const machineConfigSchema = z.strictObject({
	/** The file format; bumped when a change needs a migration. */
	version: z.literal(1),
	server: storedOriginSchema,
	label: z.string().trim().min(1).max(100),
	checkouts: z.array(checkoutSchema).default([]),
	/** The ACP coding agent for builds; absent on a machine that only runs Planner backends. */
	acpCommand: commandWordsSchema.optional(),
	planner: plannerSchema.optional(),
});

export type MachineConfig = z.infer<typeof machineConfigSchema>;
export type Checkout = z.infer<typeof checkoutSchema>;
export type PlannerConfig = z.infer<typeof plannerSchema>;

type ConfigPaths = Pick<CliPaths, "configDir" | "machineConfigFile" | "checkedFile">;

export function loadMachineConfig(paths: ConfigPaths): MachineConfig | undefined {
	const file = paths.machineConfigFile;
	return readJsonFile(
		file,
		machineConfigSchema,
		{ code: "config-invalid", what: "machine config" },
		{ onAccepted: (text) => recordChecked(paths, file, text) },
	);
}

export function saveMachineConfig(paths: ConfigPaths, config: MachineConfig): void {
	const checked = machineConfigSchema.parse(config);
	ensurePrivateDir(paths.configDir);
	writeJsonAtomic(paths.machineConfigFile, checked, { mode: 0o600 });
}

/**
 * Adds a checkout, or updates the one at the same path (its origin or branch may have
 * changed). Idempotent: adding the same checkout twice changes nothing and reports `added: false`.
 */
export function withCheckout(
	config: MachineConfig,
	checkout: Checkout,
): { config: MachineConfig; changed: boolean; added: boolean } {
	const next = checkoutSchema.parse(checkout);
	const index = config.checkouts.findIndex((c) => samePath(c.path, next.path));
	if (index < 0)
		return { config: { ...config, checkouts: [...config.checkouts, next] }, changed: true, added: true };
	const current = config.checkouts[index]!;
	if (JSON.stringify(current) === JSON.stringify(next)) return { config, changed: false, added: false };
	const checkouts = config.checkouts.with(index, next);
	return { config: { ...config, checkouts }, changed: true, added: false };
}

/** Removes the checkout at a path; removing one that is not there changes nothing. */
export function withoutCheckout(
	config: MachineConfig,
	path: string,
): { config: MachineConfig; removed: boolean } {
	const checkouts = config.checkouts.filter((c) => !samePath(c.path, path));
	return { config: { ...config, checkouts }, removed: checkouts.length !== config.checkouts.length };
}

/** Loads, adds the checkout and saves only when something changed. */
export function addCheckout(
	paths: ConfigPaths,
	checkout: Checkout,
): { config: MachineConfig; added: boolean } {
	const config = loadMachineConfig(paths);
	if (!config) throw new Error("addCheckout needs an existing machine config (chopin connect writes it)");
	const result = withCheckout(config, checkout);
	if (result.changed) saveMachineConfig(paths, result.config);
	return { config: result.config, added: result.added };
}

/** Windows paths compare case-insensitively and with either slash; POSIX paths exactly. Trailing slashes never count. */
function samePath(a: string, b: string): boolean {
	const drive = /^[A-Za-z]:/;
	if (drive.test(a) || drive.test(b)) return windowsKey(a) === windowsKey(b);
	return posixKey(a) === posixKey(b);
}

function posixKey(path: string): string {
	const normal = posix.normalize(path);
	return normal.length > 1 ? normal.replace(/\/+$/, "") : normal;
}

function windowsKey(path: string): string {
	return win32.normalize(path).replace(/\\+$/, "").toLowerCase();
}
