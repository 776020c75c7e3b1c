/**
 * What a contract scenario is: a client-side script that takes the client module, a server
 * (URL, token, document) and parameters, and returns what it observed as JSON. Scenarios never
 * see the scripted server, so they run against any Chopin server, in Bun or in Node.js.
 */
import type * as Client from "../index";
import type { LinkClosed } from "../link-closed";
import type { WebSocketConstructor } from "../transport";

export type ClientModule = typeof Client;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface ScenarioTarget {
	url: string;
	token: string;
	document: string;
}

export interface ScenarioContext {
	client: ClientModule;
	target: ScenarioTarget;
	/** The WebSocket class to pass (ws on Node); undefined uses the runtime's own. */
	WebSocket?: WebSocketConstructor;
	runtime: "bun" | "node";
	// biome-ignore lint/suspicious/noExplicitAny: each scenario reads its own parameters.
	params: any;
}

export type Scenario = (context: ScenarioContext) => Promise<Json>;

/** An error as JSON, with whether the bearer token shows anywhere in it. */
export function errorSummary(error: unknown, token: string): Json {
	if (!(error instanceof Error)) return { name: "unknown", message: String(error) };
	const fields = error as Error & {
		code?: string;
		status?: number;
		retry?: boolean;
		hint?: string;
		closed?: LinkClosed;
	};
	const text = [error.message, fields.hint ?? "", error.stack ?? "", JSON.stringify(fields)].join("\n");
	return strip({
		name: error.name,
		code: fields.code,
		status: fields.status,
		retry: fields.retry,
		message: error.message,
		hint: fields.hint,
		closed: fields.closed ? closedSummary(fields.closed) : undefined,
		leaksToken: text.includes(token),
	});
}

export function closedSummary(closed: LinkClosed): Json {
	return strip({
		code: closed.code,
		reason: closed.reason,
		refused: closed.refused,
		error: closed.error,
		resume: closed.resume ? closed.resume.toJSON() : undefined,
		reconnectWithinMs: closed.reconnectWithinMs,
	});
}

/** A value as JSON, dropping undefined fields. */
export function strip(value: unknown): Json {
	return JSON.parse(JSON.stringify(value ?? null));
}
