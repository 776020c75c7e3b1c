/** How a link ended, as its closed promise settles, and whether that ending keeps the link's work. */
import type { RefusalCode } from "../closing";
import type { LinkResume } from "./resume";

export interface LinkClosed {
	/** The close code (1006 when the socket dropped without a close frame). */
	code: number;
	reason: string;
	/** The refused message that preceded the close, if any. */
	refused?: { code: RefusalCode; message: string; retry: boolean };
	/** The server's error message that preceded the close, or the client's own 4400 (by: "client"). */
	error?: { code: string; message: string; by: "server" | "client" };
	/**
	 * What to pass the next connectAgent as resume: present only when the link dropped
	 * unexpectedly with resumable-sessions granted (sessions may be empty).
	 */
	resume?: LinkResume;
	/** From restarting, when the server announced its restart before closing with 1012. */
	reconnectWithinMs?: number;
}

/** What the client knew when the socket closed. */
export interface CloseFacts {
	detached: boolean;
	refused?: LinkClosed["refused"];
	error?: LinkClosed["error"];
}

/**
 * A drop is a close the client did not ask for and the server did not decide: no detach, no
 * definitive refused, no error. Only a drop keeps a resumable link's work (spec: Resuming).
 */
export function isDrop(facts: CloseFacts): boolean {
	if (facts.detached || facts.error) return false;
	if (facts.refused) return facts.refused.retry;
	return true;
}
