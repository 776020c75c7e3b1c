// invoke_planner (Chopin's /mcp): a coding agent asks the document's Planner, or Chopin sends it an automatic
// follow-up. The request shows in Chat as a notice, the Planner's reply streams into Chat as any reply does, and
// the caller gets the reply's text once the turn ends, or a sentence saying it did not end in time.
import type { AttachedPlanner } from "./attached";
import { runChatTurn } from "./chat-turns";
import { wording } from "./wording";

/** How long invoke_planner waits for the Planner's turn to end; the turn goes on in Chat after that. */
export const INVOKE_REPLY_WAIT_MS = 10 * 60_000;

/** The longest notice Chat keeps: a longer request shows cut, and the Planner still gets it whole. */
const NOTICE_MAX = 4000;

export interface InvokeInput {
	documentId: string;
	/** Who asks: an account's login, or a run credential's machine owner. Their machine starts a Planner when none is attached. */
	by: string;
	/** Who asks, as Chat names them: `@ana's coding agent (build run_…)`. */
	asker: string;
	/** An automatic follow-up from Chopin (as: "system"), allowed only to the account holding the Planner. */
	system: boolean;
	message: string;
	/** The caller gave up (the HTTP request ended): stop waiting; the turn goes on in Chat. */
	signal?: AbortSignal;
}

export type InvokeResult =
	| { status: "replied"; reply: string }
	| {
			status: "refused";
			code: "planner-not-attached" | "planner-busy" | "planner-forbidden";
			message: string;
	  }
	| { status: "failed"; code: "planner-failed" | "planner-timeout"; message: string };

/** The notice, then the turn on the Planner the caller reserved; resolves with the reply or why there is none. */
export async function invokeTurn(planner: AttachedPlanner, input: InvokeInput): Promise<InvokeResult> {
	const { domain, clock } = planner.deps;
	const documentId = planner.document.id;
	let notice: Awaited<ReturnType<typeof domain.chat.postNotice>>;
	try {
		const said = input.system ? wording.followUpNotice(input.asker) : wording.invokeNotice(input.asker);
		const body = `${said}\n\n${input.message}`;
		notice = await domain.chat.postNotice(
			documentId,
			body.length > NOTICE_MAX ? `${body.slice(0, NOTICE_MAX - 1)}…` : body,
		);
	} catch (error) {
		planner.idle();
		throw error;
	}
	const prompt = input.system
		? `Chopin (automatic follow-up): ${input.message}`
		: `${input.asker}: ${input.message}`;
	const turn = runChatTurn(planner, { replyTo: notice.id, before: notice.seq, prompt });
	let timer: { cancel(): void } | undefined;
	let onAbort: (() => void) | undefined;
	const gaveUp = new Promise<InvokeResult>((resolve) => {
		const timeout = { status: "failed", code: "planner-timeout", message: wording.invokeTimeout() } as const;
		timer = clock.setTimeout(() => resolve(timeout), INVOKE_REPLY_WAIT_MS);
		onAbort = () => resolve({ ...timeout, message: wording.invokeCancelled() });
		input.signal?.addEventListener("abort", onAbort, { once: true });
	});
	const replied = turn.then(async (end): Promise<InvokeResult> => {
		const { outcome } = end;
		if (outcome.status !== "finished" || !end.replyId) {
			const message = (outcome.status !== "finished" && outcome.message) || wording.turnFailed();
			return { status: "failed", code: "planner-failed", message };
		}
		const reply = await domain.chat.get(end.replyId);
		return { status: "replied", reply: reply.body };
	});
	try {
		return await Promise.race([replied, gaveUp]);
	} finally {
		timer?.cancel();
		if (onAbort) input.signal?.removeEventListener("abort", onAbort);
	}
}
