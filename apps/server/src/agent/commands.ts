// A person's message that runs one of the attached client's commands (capability-catalog): the prompt the
// client gets, as the spec says, and the sentence an unknown command is refused with.

/** The command a message runs, as the composer picked it from the last report: name and kind as spelled. */
export interface MessageCommand {
	name: string;
	kind: string;
}

/**
 * The turn's prompt: /name args for a skill, a prompt, or any kind other than workflow (the name as the
 * client reported it); for a workflow, a request to start the workflow of that name with the words as input.
 */
export function commandPrompt(command: MessageCommand, args: string): string {
	if (command.kind !== "workflow") return `/${command.name}${args ? ` ${args}` : ""}`;
	const start = `Start the workflow ${JSON.stringify(command.name)}`;
	return args ? `${start} with this input:\n\n${args}` : `${start}.`;
}

export function commandRefusal(command: MessageCommand): string {
	return `The Planner's client does not offer the ${command.kind || "command"} /${command.name} (any more). Pick one it lists, or send the message without it.`;
}
