// What every service definition says, whatever its format: the program and its arguments, the variables it sets, and
// where its output goes. The unit, the plist and the task XML are each this, written in their own syntax.
import type { CliPaths, Platform } from "../local/paths";
import type { MachineConfig } from "../machine/machine-config";
import { CliError } from "../program/errors";
import { type ServiceManagerKind, serviceDefinitionPath, serviceLogPath, serviceManagerFor } from "./names";
import {
	type FileProbe,
	resolveServiceCommands,
	type ServiceCommand,
	type ServiceCommands,
} from "./resolve-commands";
import { pathDelimiter } from "./service-path";

export interface ServiceDefinition {
	manager: ServiceManagerKind;
	/** The words that start chopin: [its binary], or [bun, main.ts] from a source checkout. */
	program: string[];
	/** What the service runs: program, then `run --service <manager>`. */
	argv: string[];
	/** The variables the definition sets, in order (none for Task Scheduler: the task gets the user's environment). */
	env: [name: string, value: string][];
	/** Where the service's output is appended. */
	logFile: string;
	/** The unit, the plist, or the copy of the task XML. */
	file: string;
}

export interface DefinitionFacts {
	platform: Platform;
	env: Readonly<Record<string, string | undefined>>;
	home: string;
	uid: number;
	paths: Pick<CliPaths, "stateDir" | "configDir">;
	/** [binary] or [bun, main.ts]: ctx.selfCommand. */
	program: readonly string[];
	files: FileProbe;
}

/** The commands the daemon will start: the ACP agent and the Planner backend when configured, and git always. */
export function daemonCommands(config: MachineConfig | undefined): ServiceCommand[] {
	const commands: ServiceCommand[] = [];
	const acp = config?.acpCommand?.[0];
	if (acp) commands.push({ what: "the ACP agent", command: acp, first: true });
	const planner = config?.planner?.command[0];
	if (planner) commands.push({ what: "the Planner backend", command: planner, first: true });
	commands.push({ what: "git", command: "git", first: false });
	return commands;
}

/**
 * The definition for this machine, after checking that the daemon's commands resolve under its PATH (nothing is
 * written before). The state and config dirs are the ones this CLI uses, absolute, so the service serves the same
 * machine as the command that installed it.
 */
export function buildDefinition(
	facts: DefinitionFacts,
	config: MachineConfig | undefined,
): { definition: ServiceDefinition; commands: ServiceCommands } {
	const { platform, env, home, paths } = facts;
	const manager = serviceManagerFor(platform);
	const commands = resolveServiceCommands(
		{ platform, env, uid: facts.uid },
		facts.files,
		daemonCommands(config),
	);
	const program = [...facts.program];
	const definition: ServiceDefinition = {
		manager,
		program,
		argv: [...program, "run", "--service", manager],
		env:
			manager === "task"
				? []
				: [
						["PATH", commands.path.join(pathDelimiter(platform))],
						["CHOPIN_STATE_DIR", paths.stateDir],
						["CHOPIN_CONFIG_DIR", paths.configDir],
					],
		logFile: serviceLogPath(platform, paths.stateDir),
		file: serviceDefinitionPath(platform, env, home, paths.stateDir),
	};
	checkWords(definition);
	return { definition, commands };
}

/** The program words of a definition's argv (everything before `run --service <manager>`), or undefined. */
export function programOf(argv: readonly string[] | undefined): string[] | undefined {
	if (!argv || argv.length < 4) return undefined;
	const tail = argv.slice(-3);
	if (tail[0] !== "run" || tail[1] !== "--service") return undefined;
	return argv.slice(0, -3);
}

/**
 * No definition format holds a control character in a path (a unit's `append:` path ends at the line, XML 1.0 has no
 * way to write most of them), and Task Scheduler expands `%NAME%` in its action with no escape: refused, not mangled.
 */
function checkWords(definition: ServiceDefinition): void {
	const words = [...definition.argv, ...definition.env.map(([, value]) => value), definition.logFile];
	for (const word of words) {
		// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
		const bad = /[\u0000-\u001f\u007f]/.test(word)
			? "a control character (a line break, say)"
			: definition.manager === "task" && word.includes("%")
				? "a `%`, which Task Scheduler would expand"
				: undefined;
		if (bad) {
			throw new CliError(
				"service-path-unsupported",
				`The service cannot be written: ${JSON.stringify(word)} contains ${bad}.`,
				"Move chopin, its state dir (CHOPIN_STATE_DIR) or its config dir (CHOPIN_CONFIG_DIR) to a plainer path, then run `chopin service install` again.",
			);
		}
	}
}
