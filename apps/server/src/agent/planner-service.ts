// ctx.planner: what the rest of the server calls about a document's Planner. The Chat API calls handleMessage
// for a person's message; the machines domain adds a bearer resolver and closes a revoked machine's links;
// pages read status(). The implementation is planner.ts.
import type { NewAttachment } from "../chat/attachments";
import type { MessageView } from "../chat/message-view";
import type { SocketHandlers } from "../http/sockets";
import type { ChatModelState, PLANNER_STATES } from "../live/events";
import type { MessageCommand } from "./commands";
import type { ChooseResult } from "./composer-model";
import type { ControlAction } from "./control";
import type { AgentDeps } from "./deps";
import type { InvokeInput, InvokeResult } from "./invoke";
import type { JobInput, JobResult } from "./jobs";
import { Planner } from "./planner";
import type { BearerResolvers } from "./principal";
import type { RetryInput, RetryResult } from "./retry";
import type { AgentSocketData } from "./upgrade";

type PlannerState = (typeof PLANNER_STATES)[number];

export type PlannerMessageResult =
	/** Posted; `turn` says whether it became a turn of the attached Planner (it mentions @chopin). */
	| {
			status: "sent";
			message: MessageView;
			turn: boolean;
			steered?: boolean;
			/**
			 * A message committed lazily (one that begins a turn): resolves once it is on disk, and the Chat API answers
			 * the sender only then. Absent when the message was on disk before the result.
			 */
			onDisk?: Promise<void>;
	  }
	/** Not posted: nothing is kept for later. `message` is the sentence to show the person. */
	| {
			status: "refused";
			/** command-unknown: the attached client's last report does not list the command (capability-catalog). */
			code: "planner-not-attached" | "planner-busy" | "command-unknown";
			message: string;
	  };

export interface PlannerStatus {
	state: PlannerState;
	login?: string;
	/** When a grace period ends (ms since the epoch). */
	until?: number;
	/** Attached inside a restart's hand-over window, its client not back yet. */
	restarting?: true;
}

export interface LinkStats {
	id: string;
	login: string;
	documentId?: string;
	state: string;
	framesReceived: number;
	bufferedAmount: number;
}

/** Which links an explicit end applies to (the machines domain revokes a machine's, say). */
export interface LinkFilter {
	documentId?: string;
	login?: string;
	machineId?: string;
}

/** What a machine said when asked to start a document's Planner (see PlannerStarter.start). */
export type StartAnswer =
	/** A machine of the person's is starting it (or already was). */
	| { status: "starting"; login: string }
	/** The chosen machine is away. */
	| { status: "offline"; login: string }
	/** No machine of the person's can run it. */
	| { status: "none" };

/**
 * What starts Planners on paired machines for a document with none attached; the machines domain
 * provides it (machine-planners.ts). Without one, an @chopin message is refused at once.
 */
export interface PlannerStarter {
	/** Whether Chopin runs Planners on paired machines here (it decides the "Connect a machine" wording). */
	enabled(): boolean;
	/** Asks `by`'s chosen machine to start the document's Planner. */
	start(documentId: string, by: string): Promise<StartAnswer>;
	/** Set once the machine's backend exited before attaching more than once in a row: whose machine, and why. */
	failing(documentId: string): { login: string; reason: string } | undefined;
	/** A machine's Planner credential attached the document. */
	attached(documentId: string): void;
	/** The document was used (an @chopin message): its unused period starts again. */
	used(documentId: string): void;
}

/** A person's Chat message as the Chat API hands it to the Planner service. */
export interface ChatMessageInput {
	documentId: string;
	author: string;
	body: string;
	/** Runs one of the attached client's commands: body is its args (capability-catalog). */
	command?: MessageCommand;
	/** Files sent with it (attachments): checked and kept with the message, carried by its turn. */
	attachments?: readonly NewAttachment[];
	/** Posted in the thread on this top-level message (docs/chat.md, Threads). */
	thread?: string;
}

/**
 * What the rest of the server calls. The Chat API calls handleMessage for a person's message; the
 * machines domain adds a resolver for chopin_p_ credentials and calls closeLinks when a machine is
 * revoked; pages read status().
 */
export interface PlannerService {
	/** Bearer resolvers of /api/v1/agent; add one for another kind of credential. */
	readonly resolvers: BearerResolvers;
	/**
	 * A person's Chat message. Without an @chopin mention it is simply posted. With one it becomes a
	 * turn of the attached Planner, or is refused and not posted: planner-not-attached (no Planner,
	 * or one in its grace period) or planner-busy (it is working on a turn). Throws the Chat
	 * service's errors (ChatError: empty, too long, archived, ...) for a message it cannot take.
	 */
	handleMessage(input: ChatMessageInput): Promise<PlannerMessageResult>;
	/**
	 * Retry on a failed reply: its sender only (ChatError retry-forbidden otherwise); the failed attempt leaves
	 * Chat for everyone and the same message's turn runs again, or it is refused as an @chopin message is.
	 */
	retry(input: RetryInput): Promise<RetryResult>;
	/**
	 * An invoke_planner call (Chopin's /mcp): the same path as an @chopin message (a stale link closed, a
	 * machine asked to start a Planner and the wait, the spec's refusals, planner-busy), shown in Chat as
	 * a notice of who asked; resolves with the Planner's reply once its turn ends (at most
	 * INVOKE_REPLY_WAIT_MS). `system` (as: "system") is refused planner-forbidden unless `by` holds the Planner.
	 */
	invoke(input: InvokeInput): Promise<InvokeResult>;
	/** The document's Planner as pages show it; also published as planner.status live events. */
	status(documentId: string): PlannerStatus;
	/** Whether the document's Planner is using it: replying, or holding a question or a live or paused run. */
	using(documentId: string): boolean;
	/** What the composer offers from the attached client's catalog, and the document's choice (chat.model). */
	modelState(documentId: string): Promise<ChatModelState>;
	/** A person's choice of model and thinking level, checked against the attached client's last catalog. */
	chooseModel(
		documentId: string,
		by: string,
		choice: { model: string | null; thinkingLevel: string | null },
	): Promise<ChooseResult>;
	/** A repository writer's Reset: the attached link is refused access-revoked (4403), a grace period ends. */
	reset(documentId: string): boolean;
	/** Stop or Resume Planner; null when no Planner is attached. Stop also aborts the running turn. */
	control(documentId: string, action: ControlAction, by: string): { sent: number } | null;
	/** A background job's turn in an isolated session of the attached Planner. */
	runJob(documentId: string, input: JobInput): Promise<JobResult>;
	/** Plugs in what starts Planners on paired machines; returns its removal. */
	setStarter(starter: PlannerStarter): () => void;
	/** Ends matching attachments at once (no grace): refused with code and message, then closed. */
	closeLinks(
		filter: LinkFilter,
		refusal: { code: "access-revoked" | "sign-in-required"; message: string | ((login: string) => string) },
	): number;
	/** Resolves once the rechecks, withdrawals and teardowns under way have finished (tests). */
	settled(): Promise<void>;
	/** How many agent sockets are open (metrics, benchmarks). */
	connections(): number;
	/** Each open link: who, which document once attached, frames read, bytes queued for it. */
	linkStats(): LinkStats[];
	/** The handlers of the "agent" socket kind. */
	socketHandlers(): SocketHandlers<AgentSocketData>;
	/**
	 * Start-up: rebuilds the planner_link_holds rows the last process wrote as suspended holds (github mode;
	 * under AUTH_MODE=local nothing is handed over), and reads the answers still waiting for a follow-up turn.
	 */
	restoreHolds(): Promise<void>;
	/**
	 * The server is stopping: every link is told (restarting, with restart-notice), then closed with 1012. In
	 * github mode no question is withdrawn and what resumable links kept is written to planner_link_holds;
	 * under AUTH_MODE=local what every link held ends.
	 */
	stop(): Promise<void>;
}

export function createPlannerService(deps: AgentDeps): PlannerService {
	return new Planner(deps);
}
