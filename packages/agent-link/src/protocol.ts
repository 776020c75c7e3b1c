/**
 * The identity of chopin.agent.v1: its subprotocol, version, endpoint, and the timings the spec
 * fixes, so a client and the server read the same numbers from one place.
 */

/** The WebSocket subprotocol; it is the version (a breaking change gets chopin.agent.v2). */
export const SUBPROTOCOL = "chopin.agent.v1";
/** attach.version and attached.version for chopin.agent.v1. */
export const PROTOCOL_VERSION = 1;
/** Every subprotocol this package speaks, as a 426 lists them in `supported`. */
export const SUPPORTED_SUBPROTOCOLS = [SUBPROTOCOL] as const;
/** Path of the agent connection on the Chopin origin. */
export const AGENT_PATH = "/api/v1/agent";

/** Whether a Sec-WebSocket-Protocol request header offers chopin.agent.v1 (it may offer others). */
export function offersSubprotocol(header: string | null | undefined): boolean {
	if (!header) return false;
	return header.split(",").some((entry) => entry.trim() === SUBPROTOCOL);
}

/** The bearer a paired machine's Planner backend uses: chopin_p_ then 43 base64url characters. */
export const PLANNER_CREDENTIAL_PATTERN = /^chopin_p_[A-Za-z0-9_-]{43}$/;

/**
 * Timings from the spec. The ping interval, timeout and longest silence are the server's
 * defaults (AGENT_CONNECTION_PING_MS, _TIMEOUT_MS, _MAX_SILENCE_MS); the rest are fixed.
 */
export const TIMING = {
	/** The server pings every 15 s. */
	pingIntervalMs: 15_000,
	/** Nothing heard for 120 s: the link is dropped (close 1001, reason unresponsive). */
	timeoutMs: 120_000,
	/** Nothing at all sent for 15 min, however the queue drains: dropped too. */
	maxSilenceMs: 900_000,
	/** The operator may raise the longest silence up to an hour. */
	maxSilenceCeilingMs: 3_600_000,
	/** start/fork, abort, steer, stop and resume are answered within 10 s. */
	answerWithinMs: 10_000,
	/** After a restarting notice, retry the same resume this often until reconnectWithinMs passes. */
	restartResumeRetryMs: 250,
	/** Default PLANNER_ATTACH_GRACE_MS; the operator may set 0 to 3,600,000. */
	attachGraceMs: 120_000,
	attachGraceMaxMs: 3_600_000,
	/** The server rechecks access every 5 minutes while attached. */
	accessRecheckMs: 300_000,
} as const;
