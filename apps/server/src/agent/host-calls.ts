// Running one host-tool-call: its toolCallId once per turn, a name the turn offers, the permission policy,
// the input as JSON (within MAX_JSON_DEPTH) the tool accepts, then the tool; every failure is an error result, a
// refusal execution-denied.
import { EncodeError, type HostToolCall } from "@chopin/agent-link";
import { JSON_TOO_DEEP_MESSAGE, parseJsonWithin } from "@chopin/agent-link/json-depth";
import { DomainError } from "../domain-error";
import { findHostTool, ToolInputError } from "./tools/registry";
import type { PlannerTurn } from "./turns";

export async function runHostCall(turn: PlannerTurn, call: HostToolCall): Promise<void> {
	const { toolCallId, toolName } = call;
	const repeated = turn.rules.takeCallId(toolCallId);
	if (repeated) {
		// A reused id fails the turn without running the tool again.
		turn.fail(repeated);
		return;
	}
	const tool = turn.rules.hostTools.has(toolName) ? findHostTool(toolName) : undefined;
	turn.sink.toolStarted({ toolCallId, name: toolName, input: call.input });
	const answer = (output: unknown, isError: boolean, shown: unknown = output) => {
		if (turn.state !== "running") return;
		let sent: unknown = output;
		try {
			turn.sendResult(toolCallId, output, isError);
		} catch (error) {
			if (!(error instanceof EncodeError)) throw error;
			sent = {
				error:
					error.code === "message-too-large"
						? "The tool's result is too large for one message (over 2 MiB). Ask for less, such as a page at a time."
						: `The tool's result could not be sent: ${error.message}`,
			};
			isError = true;
			shown = sent;
			turn.sendResult(toolCallId, sent, true);
		}
		turn.sink.toolFinished({ toolCallId, name: toolName, result: shown, isError });
	};
	if (!tool) {
		answer({ error: `No host tool named ${JSON.stringify(toolName)} is offered in this turn.` }, true);
		return;
	}
	const controller = turn.trackCall(toolCallId);
	try {
		// The permission policy: the owner's admission and push access, checked before every call.
		const verdict = await turn.host.checkAccess();
		if (controller.signal.aborted) return;
		if (!verdict.ok) {
			if (verdict.code === "unavailable") {
				answer({ error: verdict.message }, true);
			} else {
				answer({ type: "execution-denied", reason: verdict.message }, false, {
					error: { code: "execution-denied", kind: "ExecutionDenied", message: verdict.message },
				});
			}
			return;
		}
		const input = parseJsonWithin(call.input);
		if (!input.ok) {
			answer(
				{
					error:
						input.reason === "too-deep"
							? `${JSON_TOO_DEEP_MESSAGE} Send the tool's arguments as a flatter JSON object.`
							: "The input is not valid JSON: send the tool's arguments as a JSON object.",
				},
				true,
			);
			return;
		}
		let args: unknown;
		try {
			args = tool.parse(input.value);
		} catch (error) {
			if (!(error instanceof ToolInputError)) throw error;
			answer({ error: `Invalid input for ${toolName}: ${error.message}` }, true);
			return;
		}
		const output = await tool.run(args, {
			...turn.host.toolContext(controller.signal),
			imageStored: async (image, alt) => turn.sink.image?.(image, alt),
		});
		if (controller.signal.aborted) return;
		answer(output, false);
	} catch (error) {
		if (controller.signal.aborted) return;
		const message =
			error instanceof DomainError || error instanceof Error ? error.message : "The tool failed.";
		if (!(error instanceof DomainError)) turn.host.log.warn("host tool threw", { error, tool: toolName });
		answer({ error: message }, true);
	} finally {
		turn.untrackCall(toolCallId);
	}
}
