// One turn on a session: its parts in order under the Stream parts rules, its host tool calls, and exactly one
// end: the client's turn-end, the server failing it (a rule broken, an error part), or 10 s after an abort.
import type { HostTool, HostToolCall, Part, ServerMessage, TurnEnd } from "@chopin/agent-link";
import type { Clock, Timer } from "@chopin/agent-link/clock";
import type { StoredImage } from "../images/service";
import type { Logger } from "../log";
import type { AccessVerdict } from "./access";
import { ANSWER_WITHIN_MS } from "./deps";
import { runHostCall } from "./host-calls";
import { TurnRules } from "./parts";
import type { PlannerSession } from "./sessions";
import { HOST_TOOL_NAMES, type HostToolContext } from "./tools/registry";
import { wording } from "./wording";

export type TurnOutcome =
	| { status: "finished" }
	| { status: "failed"; message: string }
	| { status: "aborted"; message?: string };

/** A tool call began: its row shows running. */
export interface ToolStarted {
	toolCallId: string;
	name: string;
	input: string;
}

/** A tool call's result (or a preliminary one). */
export interface ToolFinished {
	toolCallId: string;
	name: string;
	result: unknown;
	isError?: boolean;
	preliminary?: boolean;
}

/** Where a turn's output goes: a streaming Chat reply, or a background job's text. */
export interface TurnSink {
	text(delta: string, partId: string): void;
	toolStarted(call: ToolStarted): void;
	toolFinished(result: ToolFinished): void;
	/** A host call stored an image (upload_plan_image): shown on the turn's message; resolves once it is. */
	image?(image: StoredImage, alt: string): Promise<void>;
	/** Once, with how the turn ended. */
	ended(outcome: TurnOutcome): void;
}

/** What a turn needs from its link. */
export interface TurnHost {
	readonly clock: Clock;
	readonly log: Logger;
	/** Sends on the link; false when it is closed. Throws EncodeError for what the client would refuse. */
	send(message: ServerMessage): boolean;
	/** A protocol violation: error, then 1008. */
	violation(message: string): void;
	/** The permission policy, before every host tool call. */
	checkAccess(): Promise<AccessVerdict>;
	toolContext(signal: AbortSignal): HostToolContext;
	/** The turn ended (its session may be destroyed, the Planner is free again). */
	turnEnded(turn: PlannerTurn, outcome: TurnOutcome): void;
}

export class PlannerTurn {
	readonly rules: TurnRules;
	state: "running" | "aborting" | "ended" = "running";
	readonly done: Promise<TurnOutcome>;
	#clientEnded = false;
	#abortTimer: Timer | undefined;
	readonly #calls = new Map<string, AbortController>();
	#settle!: (outcome: TurnOutcome) => void;

	constructor(
		readonly session: PlannerSession,
		readonly id: string,
		readonly tools: readonly HostTool[],
		readonly sink: TurnSink,
		readonly host: TurnHost,
	) {
		this.rules = new TurnRules(
			new Set(tools.map((t) => t.name)),
			HOST_TOOL_NAMES,
			session.mode === "isolated",
		);
		this.done = new Promise((resolve) => {
			this.#settle = resolve;
		});
	}

	get running(): boolean {
		return this.state === "running";
	}

	/** tools: the client's own tools for this turn. */
	declare(names: readonly string[]): void {
		if (this.state !== "running") return;
		const failure = this.rules.declare(names);
		if (failure) this.fail(failure);
	}

	part(message: Part): void {
		if (this.state === "ended") return;
		const verdict = this.rules.check(message.part);
		if (!verdict.ok) {
			this.fail(verdict.failure);
			return;
		}
		const { effect } = verdict;
		switch (effect.kind) {
			case "text":
				this.sink.text(effect.delta, effect.id);
				break;
			case "tool-call":
				this.sink.toolStarted({ toolCallId: effect.toolCallId, name: effect.toolName, input: effect.input });
				break;
			case "tool-result":
				this.sink.toolFinished({
					toolCallId: effect.toolCallId,
					name: effect.toolName,
					result: effect.result,
					...(effect.isError !== undefined && { isError: effect.isError }),
					...(effect.preliminary !== undefined && { preliminary: effect.preliminary }),
				});
				break;
		}
	}

	/** host-tool-call: runs in the background; the link keeps reading meanwhile. */
	hostCall(call: HostToolCall): void {
		if (this.state !== "running") {
			// A call after the turn ended (or while it is being aborted) gets an error result, never a run.
			this.sendResult(call.toolCallId, { error: wording.turnEndedForTool() }, true, true);
			return;
		}
		void runHostCall(this, call).catch((error: unknown) =>
			this.host.log.error("host tool call failed", { error, tool: call.toolName }),
		);
	}

	/** A host-tool-result for one of this turn's calls; sent only while the turn runs unless `always`. */
	sendResult(toolCallId: string, output: unknown, isError: boolean, always = false): boolean {
		if (!always && this.state !== "running") return false;
		return this.host.send({
			type: "host-tool-result",
			session: this.session.id,
			turn: this.id,
			toolCallId,
			output: output as never,
			...(isError && { isError: true }),
		});
	}

	/** Tracks a running host call, so the turn's end stops it. */
	trackCall(toolCallId: string): AbortController {
		const controller = new AbortController();
		this.#calls.set(toolCallId, controller);
		return controller;
	}

	untrackCall(toolCallId: string): void {
		this.#calls.delete(toolCallId);
	}

	/** turn-end from the client: exactly once per turn; a second one is a protocol violation. */
	clientEnd(message: TurnEnd): void {
		if (this.#clientEnded) {
			this.host.violation(
				`The turn ${message.turn} already ended with turn-end: every turn has exactly one.`,
			);
			return;
		}
		this.#clientEnded = true;
		if (this.state === "ended") return;
		const outcome: TurnOutcome =
			message.status === "finished"
				? { status: "finished" }
				: message.status === "failed"
					? { status: "failed", message: message.message || wording.turnFailed() }
					: { status: "aborted", ...(message.message && { message: message.message }) };
		this.end(outcome);
	}

	/** Server-initiated: abort, then the turn ends anyway 10 s later if no turn-end came. */
	abort(): void {
		if (this.state !== "running") return;
		this.state = "aborting";
		this.#stopCalls();
		this.#abortTimer = this.host.clock.setTimeout(() => this.end({ status: "aborted" }), ANSWER_WITHIN_MS);
		if (!this.host.send({ type: "abort", session: this.session.id, turn: this.id }))
			this.end({ status: "aborted" });
	}

	/** The server fails the turn (a broken part rule, an error part): the client is told to stop with abort. */
	fail(message: string): void {
		if (this.state === "ended") return;
		const wasRunning = this.state === "running";
		this.end({ status: "failed", message });
		if (wasRunning) this.host.send({ type: "abort", session: this.session.id, turn: this.id });
	}

	/** Ends the turn once: its host calls stop and the sink hears the outcome. */
	end(outcome: TurnOutcome): void {
		if (this.state === "ended") return;
		this.state = "ended";
		this.#abortTimer?.cancel();
		this.#stopCalls();
		if (this.session.current === this) this.session.current = undefined;
		try {
			this.sink.ended(outcome);
		} finally {
			this.#settle(outcome);
			this.host.turnEnded(this, outcome);
		}
	}

	#stopCalls(): void {
		for (const controller of this.#calls.values()) controller.abort();
		this.#calls.clear();
	}
}
