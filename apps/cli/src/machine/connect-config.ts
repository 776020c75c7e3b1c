// What `chopin connect` writes to machine.json: the stored config with this checkout added and the options given
// applied (a command replaces, lists and variables merge), so running connect again only ever adds.
import type { ConnectOptions } from "../commands/connect";
import { CliError } from "../program/errors";
import {
	type Checkout,
	type MachineConfig,
	machineConfigSchema,
	type PlannerConfig,
	withCheckout,
} from "./machine-config";

export function nextMachineConfig(
	current: MachineConfig | undefined,
	input: { server: string; hostname: string; checkout: Checkout; options: ConnectOptions },
): MachineConfig {
	const { options } = input;
	const base: MachineConfig = {
		version: 1,
		server: input.server,
		label: options.label ?? current?.label ?? defaultLabel(input.hostname),
		checkouts: current?.checkouts ?? [],
		...(current?.acpCommand ? { acpCommand: current.acpCommand } : {}),
		...(current?.planner ? { planner: current.planner } : {}),
	};
	const { config } = withCheckout(base, input.checkout);
	const acpCommand = options.acpCommand ?? config.acpCommand;
	const planner = nextPlanner(current?.planner, options, input.checkout.path);
	return machineConfigSchema.parse({
		...config,
		...(acpCommand ? { acpCommand } : {}),
		...(planner ? { planner } : {}),
	});
}

function nextPlanner(
	current: PlannerConfig | undefined,
	options: ConnectOptions,
	checkout: string,
): PlannerConfig | undefined {
	const given = options.planner;
	const documents = mergeDocuments(
		current?.documents ?? [],
		given.documents.map((document) => ({ document, checkout })),
	);
	const write = [...new Set([...(current?.sandbox.write ?? []), ...given.sandbox.write])];
	if (given.command) {
		// A new command sets the Planner up again from these options; the documents and variables stay.
		return {
			command: given.command,
			...((given.agent ?? current?.agent) ? { agent: given.agent ?? current?.agent } : {}),
			env: { ...current?.env, ...given.env },
			documents,
			sandbox: { enabled: given.sandbox.enabled, write },
		};
	}
	const anyGiven =
		given.documents.length > 0 ||
		given.agent !== undefined ||
		Object.keys(given.env).length > 0 ||
		!given.sandbox.enabled ||
		given.sandbox.write.length > 0;
	if (!current) {
		if (!anyGiven) return undefined;
		throw new CliError(
			"planner-command-missing",
			"Planner options were given, but no Planner backend command is known.",
			'Name it with --planner-command "my-planner --flag" (or CHOPIN_PLANNER_COMMAND as a JSON array).',
		);
	}
	return {
		...current,
		...(given.agent ? { agent: given.agent } : {}),
		env: { ...current.env, ...given.env },
		documents,
		// --no-sandbox turns it off; leaving the flag out never turns it back on.
		sandbox: { enabled: given.sandbox.enabled && current.sandbox.enabled, write },
	};
}

function mergeDocuments(
	current: PlannerConfig["documents"],
	added: PlannerConfig["documents"],
): PlannerConfig["documents"] {
	const out = [...current];
	for (const doc of added) if (!out.some((d) => d.document === doc.document)) out.push(doc);
	return out;
}

/** The computer's name, as a label the server accepts (1 to 100 characters, no control characters). */
export function defaultLabel(hostname: string): string {
	const clean = [...hostname]
		.filter((c) => c.charCodeAt(0) > 0x1f && c.charCodeAt(0) !== 0x7f)
		.join("")
		.trim()
		.slice(0, 100);
	return clean || "chopin machine";
}
