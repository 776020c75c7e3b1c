// The rules of a turn's stream parts (spec: Stream parts) and its tool call ids, as pure state: what each part
// means for Chat, or why it fails the turn (a tool boundary failure, a repeated call, an error part).
import type { StreamPart } from "@chopin/agent-link";

export type PartEffect =
	| { kind: "none" }
	| { kind: "text"; id: string; delta: string }
	| { kind: "tool-call"; toolCallId: string; toolName: string; input: string }
	| {
			kind: "tool-result";
			toolCallId: string;
			toolName: string;
			result: unknown;
			isError?: boolean;
			preliminary?: boolean;
	  };

export type PartVerdict = { ok: true; effect: PartEffect } | { ok: false; failure: string };

export class TurnRules {
	/** The client's own tools it declared with tools. */
	readonly declared = new Set<string>();
	/** Every toolCallId the turn used, host or own, finished or not: each is used once per turn. */
	readonly callIds = new Set<string>();
	/** Own tool calls and whether their final result came. */
	readonly #ownCalls = new Map<string, { toolName: string; final: boolean }>();

	constructor(
		/** The host tools offered in the turn. */
		readonly hostTools: ReadonlySet<string>,
		/** Every host tool Chopin has: an own tool may not take one's name. */
		readonly allHostTools: ReadonlySet<string>,
		readonly isolated: boolean,
	) {}

	/** A tools declaration: own tools this turn may call. */
	declare(names: readonly string[]): string | null {
		if (this.isolated && names.length > 0) {
			return "Tool boundary failure: an isolated session may declare no tools of its own.";
		}
		const taken = names.find((name) => this.allHostTools.has(name) || this.hostTools.has(name));
		if (taken !== undefined) {
			return `Tool boundary failure: the declared tool ${JSON.stringify(taken)} has a host tool's name.`;
		}
		for (const name of names) this.declared.add(name);
		return null;
	}

	/** Takes a toolCallId for a call; a reused one is a repeated call. */
	takeCallId(toolCallId: string): string | null {
		if (this.callIds.has(toolCallId)) return repeated(toolCallId);
		this.callIds.add(toolCallId);
		return null;
	}

	check(part: StreamPart): PartVerdict {
		switch (part.type) {
			case "text-delta":
				return { ok: true, effect: { kind: "text", id: part.id, delta: part.delta } };
			case "tool-input-start":
				// Its input may stream before a host-tool-call, or before a declared own tool's call.
				if (!this.hostTools.has(part.toolName) && !this.declared.has(part.toolName)) {
					return boundary(
						`tool-input-start names ${JSON.stringify(part.toolName)}, which this turn neither offers nor declared`,
					);
				}
				return none;
			case "tool-call": {
				if (!this.declared.has(part.toolName)) {
					return boundary(
						this.hostTools.has(part.toolName) || this.allHostTools.has(part.toolName)
							? `tool-call names the host tool ${JSON.stringify(part.toolName)}: call host tools with host-tool-call`
							: `tool-call names ${JSON.stringify(part.toolName)}, which was not declared with tools first`,
					);
				}
				const taken = this.takeCallId(part.toolCallId);
				if (taken) return { ok: false, failure: taken };
				this.#ownCalls.set(part.toolCallId, { toolName: part.toolName, final: false });
				return {
					ok: true,
					effect: {
						kind: "tool-call",
						toolCallId: part.toolCallId,
						toolName: part.toolName,
						input: part.input,
					},
				};
			}
			case "tool-result": {
				const call = this.#ownCalls.get(part.toolCallId);
				if (!call || call.toolName !== part.toolName || call.final) {
					return boundary(
						call?.final
							? `tool-result for ${JSON.stringify(part.toolCallId)} after its final result`
							: `tool-result for ${JSON.stringify(part.toolCallId)} does not follow its own tool-call`,
					);
				}
				if (part.preliminary !== true) call.final = true;
				return {
					ok: true,
					effect: {
						kind: "tool-result",
						toolCallId: part.toolCallId,
						toolName: part.toolName,
						result: part.result,
						...(part.isError !== undefined && { isError: part.isError }),
						...(part.preliminary !== undefined && { preliminary: part.preliminary }),
					},
				};
			}
			case "error":
				return { ok: false, failure: part.error || "The turn failed." };
			default:
				// stream-start, text and reasoning boundaries, reasoning, tool input deltas, finish parts.
				return none;
		}
	}
}

const none: PartVerdict = { ok: true, effect: { kind: "none" } };

function boundary(detail: string): PartVerdict {
	return { ok: false, failure: `Tool boundary failure: ${detail}.` };
}

function repeated(toolCallId: string): string {
	return `Repeated tool call: the toolCallId ${JSON.stringify(toolCallId)} was already used in this turn.`;
}
