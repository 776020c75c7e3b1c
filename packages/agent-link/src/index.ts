/**
 * @chopin/agent-link: the chopin.agent.v1 wire format. Schemas and their types, the protocol's
 * constants and limits, and the parse and encode entries both ends use at the socket.
 */

export * from "./closing";
export {
	EncodeError,
	type EncodeOptions,
	encodeClientMessage,
	encodeMessage,
	encodeServerMessage,
} from "./encode";
export * from "./features";
export { CLIENT_TYPE_FEATURES, SERVER_TYPE_FEATURES, TURN_FIELD_FEATURES } from "./gating";
export { type InputResultReading, readInputResult } from "./input-results";
export * from "./limits";
export {
	type FrameData,
	PARSE_ERROR_CODES,
	type ParseError,
	type ParseErrorCode,
	type ParseOptions,
	type ParseResult,
	parseClientFrame,
	parseServerFrame,
	toWireError,
} from "./parse";
export * from "./protocol";
export * from "./schemas/attachments";
export * from "./schemas/catalog";
export * from "./schemas/client-messages";
export * from "./schemas/handshake";
export * from "./schemas/host-tools";
export * from "./schemas/parts";
export * from "./schemas/questions";
export * from "./schemas/resume";
export * from "./schemas/runs";
export * from "./schemas/server-messages";
export * from "./schemas/tool-results";
export { codePointLength, cutNote, cutToCodePoints, utf8ByteLength } from "./text";
