// A person's message that runs one of the attached client's commands (capability-catalog): checked against the
// client's last report, posted as /name args, and run as an ordinary turn with the prompt the spec gives.
import type { MessageView } from "../chat/message-view";
import { runChatTurn } from "./chat-turns";
import type { PlannerMessageResult } from "./planner-service";
import { type ReserveDeps, reservePlanner } from "./reserve";

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

/**
 * Checked against the attached client's last report when sent (an unknown name or kind is refused and nothing
 * is posted) and again once the Planner is reserved (the report may have changed, or another client attached).
 */
export async function runCommandMessage(
	reserve: ReserveDeps,
	input: { documentId: string; author: string; body: string; command: MessageCommand },
): Promise<PlannerMessageResult> {
	const { name, kind } = input.command;
	const refused = {
		status: "refused",
		code: "command-unknown",
		message: commandRefusal(input.command),
	} as const;
	if (!reserve.attached(input.documentId)?.catalog?.command(name, kind)) return refused;
	const reserved = await reservePlanner(reserve, input.documentId, input.author);
	if (!reserved.ok) return reserved.refusal as PlannerMessageResult;
	const { planner } = reserved;
	if (!planner.catalog?.command(name, kind)) {
		planner.idle();
		return refused;
	}
	const args = input.body.trim();
	let message: MessageView;
	try {
		const body = `/${name}${args ? ` ${args}` : ""}`;
		message = (await reserve.deps.domain.chat.post(input.documentId, { author: input.author, body })).message;
	} catch (error) {
		planner.idle();
		throw error;
	}
	void runChatTurn(planner, {
		replyTo: message.id,
		before: message.seq,
		prompt: commandPrompt(input.command, args),
	});
	return { status: "sent", message, turn: true };
}
