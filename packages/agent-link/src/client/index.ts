/**
 * @chopin/agent-link/client: the reference client of chopin.agent.v1. connectAgent attaches a
 * backend to a document and runs the protocol for it: handshake, sessions, turns, host tools,
 * questions, runs reports, resuming after a drop, and the 4400 close for frames it cannot read.
 */

export { bunImageShrinker, type ImageShrinker } from "./bun-image";
export { connectAgent } from "./connection";
export {
	isRetryable,
	LINK_ERROR_CODES,
	LinkError,
	type LinkErrorCode,
	Refused,
	UpgradeRefused,
} from "./errors";
export { AgentLink } from "./link";
export type { LinkClosed } from "./link-closed";
export type { ConnectOptions, ControlAnswer, Handlers } from "./options";
export {
	type AskedQuestion,
	type AskOptions,
	type LocalCancelledResult,
	localCancelledResultSchema,
	type QuestionResult,
} from "./questions";
export { type ReconnectEvent, type ReconnectOptions, reconnectAgent } from "./reconnect";
export { LinkResume } from "./resume";
export { type ReportedCard, type RunsReport, runsReportSchema } from "./runs-report";
export { Session, type SessionMode } from "./session";
export { fitToolResultImages } from "./tool-result-images";
export type { WebSocketConstructor } from "./transport";
export { type HostToolOutcome, Turn, type TurnStatus } from "./turn";
