// The pages' calls to the JSON API: same-origin fetch with the session cookie, JSON in and out, and the
// server's { code, message, hint } as an ApiError a page can show.
import type { BuildView } from "../builds/build-view";
import type { LogLine } from "../builds/log-lines";
import type { Builds } from "../builds/service";
import type { MessageView } from "../chat/message-view";
import type { DecisionView } from "../decisions/decision-view";
import type { DocumentSummary, DocumentView } from "../documents/document-view";
import type { RunCardView } from "../runs/run-view";

export type Permission = "read" | "write" | "admin";

export class ApiError extends Error {
	constructor(
		readonly status: number,
		readonly code: string,
		message: string,
		readonly hint?: string,
		readonly body?: Record<string, unknown>,
	) {
		super(message);
		this.name = "ApiError";
	}
}

/** A request to the API; rejects with ApiError (a 401 first sends the browser to sign in). */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
	return (await apiResponse<T>(method, path, body)).data;
}

/** As api(), with the status of the answer (a 201 and a 200 may say different things). */
export async function apiResponse<T>(
	method: string,
	path: string,
	body?: unknown,
): Promise<{ status: number; data: T }> {
	const init: RequestInit = { method, headers: { accept: "application/json" }, credentials: "same-origin" };
	if (body instanceof Blob) {
		init.body = body;
		init.headers = { ...init.headers, "content-type": body.type || "application/octet-stream" };
	} else if (body !== undefined) {
		init.body = JSON.stringify(body);
		init.headers = { ...init.headers, "content-type": "application/json" };
	}
	const res = await fetch(path, init);
	if (res.status === 204) return { status: 204, data: undefined as T };
	const data = (await res.json().catch(() => ({}))) as Record<string, unknown>;
	if (res.ok) return { status: res.status, data: data as T };
	const error = new ApiError(
		res.status,
		String(data.code ?? "error"),
		String(data.message ?? `The server answered ${res.status}.`),
		typeof data.hint === "string" ? data.hint : undefined,
		data,
	);
	if (res.status === 401 && error.code === "sign-in-required") goSignIn();
	throw error;
}

/** Sends the browser to sign in, and back to this page afterwards. */
export function goSignIn(): void {
	if (location.pathname === "/sign-in") return;
	location.assign(`/sign-in?${new URLSearchParams({ next: location.pathname + location.search })}`);
}

/** What a failure says to a person: the message, then the hint. */
export function describeError(error: unknown): string {
	if (error instanceof ApiError) return error.hint ? `${error.message} ${error.hint}` : error.message;
	return "Chopin could not be reached. Check your connection and try again.";
}

export interface Me {
	login: string;
	name: string | null;
	avatarUrl: string | null;
	mode: "local" | "github";
}

export interface DocumentPayload {
	document: DocumentView;
	permission: Permission;
	url: string;
	images: string[];
}

export interface PlannerStatus {
	state: "unattached" | "starting" | "attached" | "working" | "grace" | "disconnected";
	login?: string;
	until?: number;
	restarting?: true;
}

/** GET /api/documents/:id/builds/base: the machine a start would run on and its checkout's HEAD. */
export type BuildBase = Awaited<ReturnType<Builds["base"]>> & { document: string };

/** A page of GET /api/builds/:id/log. */
export type LogPage = Awaited<ReturnType<Builds["log"]>>;

export type { PairingConfirmed } from "@chopin/agent-link/machine";
export type { MachineRunView, MachineView } from "../machines/machine-view";
export type { DocumentMachine, MachinePin, MachinesPage, NamedDocument } from "../machines/page-data";
export type { PairingView } from "../machines/pairings";
export type { BuildView, DecisionView, DocumentSummary, DocumentView, LogLine, MessageView, RunCardView };
