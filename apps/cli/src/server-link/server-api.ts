// The CLI's HTTP calls to its Chopin server (pairing and the machine API): the Chopin-Client header on every one,
// a timeout on the injected clock, and every refusal turned into a CliError with its documented code.

import { parseJsonWithin } from "@chopin/agent-link/json-depth";
import {
	CLIENT_HEADER,
	type GitHubToken,
	githubTokenSchema,
	type MachineInfo,
	machineInfoSchema,
	type PairingClaimed,
	type PairingStart,
	type PairingStarted,
	type PlannerCredential,
	pairingClaimedSchema,
	pairingStartedSchema,
	plannerCredentialSchema,
} from "@chopin/agent-link/machine";
import type { z } from "zod";
import type { CliContext } from "../program/context";
import { CliError } from "../program/errors";
import { clientHeader, clientInfo } from "./client-info";
import { readErrorBody, refusalError, retryAfterMs, unreachable } from "./server-errors";

/** Long enough for a slow server, short enough that a person is not left staring at nothing. */
export const REQUEST_TIMEOUT_MS = 15_000;

export type ServerApiContext = Pick<
	CliContext,
	| "fetch"
	| "clock"
	| "log"
	| "signal"
	| "version"
	| "platform"
	| "arch"
	| "installMethod"
	| "execPath"
	| "selfCommand"
	| "home"
>;

export class ServerApi {
	readonly server: string;
	readonly #ctx: ServerApiContext;

	constructor(ctx: ServerApiContext, server: string) {
		this.#ctx = ctx;
		this.server = server;
	}

	/** POST /api/connector/pairings: the link, code, secret and poll interval. */
	startPairing(body: Omit<PairingStart, "client">): Promise<PairingStarted> {
		return this.#call("POST", "/api/connector/pairings", pairingStartedSchema, {
			body: { ...body, client: clientInfo(this.#ctx) },
		});
	}

	/** POST /api/connector/pairings/:id/claim: pending, or the credential (once). */
	claim(id: string, secret: string): Promise<PairingClaimed> {
		return this.#call(
			"POST",
			`/api/connector/pairings/${encodeURIComponent(id)}/claim`,
			pairingClaimedSchema,
			{
				body: { secret },
			},
		);
	}

	/** GET /api/connector/machine: who the credential belongs to. */
	machine(token: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<MachineInfo> {
		return this.#call("GET", "/api/connector/machine", machineInfoSchema, { token, timeoutMs });
	}

	/** DELETE /api/connector/machine: revokes this machine. */
	async revoke(token: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<void> {
		await this.#call("DELETE", "/api/connector/machine", undefined, { token, timeoutMs });
	}

	/** POST /api/connector/planner: a Planner credential for one document, good for 15 minutes. */
	plannerCredential(token: string, document: string): Promise<PlannerCredential> {
		return this.#call("POST", "/api/connector/planner", plannerCredentialSchema, {
			token,
			body: { document },
		});
	}

	/** GET /api/connector/github-token: the owner's GitHub token, or undefined (204) when Chopin gives none. */
	async githubToken(token: string): Promise<GitHubToken | undefined> {
		return (
			(await this.#call("GET", "/api/connector/github-token", githubTokenSchema, { token })) ?? undefined
		);
	}

	async #call<T extends z.ZodType>(
		method: string,
		path: string,
		schema: T | undefined,
		options: { body?: unknown; token?: string; timeoutMs?: number },
	): Promise<z.infer<T>> {
		const ctx = this.#ctx;
		if (ctx.signal.aborted) throw interrupted();
		const headers: Record<string, string> = {
			[CLIENT_HEADER]: clientHeader(ctx),
			accept: "application/json",
		};
		if (options.token) headers.authorization = `Bearer ${options.token}`;
		if (options.body !== undefined) headers["content-type"] = "application/json";
		const controller = new AbortController();
		const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
		let timedOut = false;
		const timer = ctx.clock.setTimeout(() => {
			timedOut = true;
			controller.abort();
		}, timeoutMs);
		const onAbort = () => controller.abort();
		ctx.signal.addEventListener("abort", onAbort, { once: true });
		let res: Response;
		let text: string;
		try {
			res = await ctx.fetch(new URL(path, this.server), {
				method,
				headers,
				body: options.body === undefined ? undefined : JSON.stringify(options.body),
				signal: controller.signal,
				redirect: "manual",
			});
			text = await res.text();
		} catch (error) {
			if (ctx.signal.aborted) throw interrupted();
			const why = timedOut ? `no answer within ${Math.round(timeoutMs / 1000)} s` : networkReason(error);
			ctx.log.debug({ method, path, why }, "server request failed");
			throw unreachable(this.server, why);
		} finally {
			timer.cancel();
			ctx.signal.removeEventListener("abort", onAbort);
		}
		ctx.log.debug({ method, path, status: res.status }, "server request");
		const json = parseJson(text);
		if (res.status >= 300) {
			const body = readErrorBody(json);
			const error = refusalError(res.status, body, this.#errorContext());
			error.serverCode = body?.code;
			error.status = res.status;
			// An HTTP-date Retry-After is the server's wall clock, so it is read against ours, not the injected one.
			error.retryAfterMs = retryAfterMs(res.headers.get("retry-after"), body, Date.now());
			throw error;
		}
		if (!schema || res.status === 204) return undefined as z.infer<T>;
		const parsed = schema.safeParse(json);
		if (!parsed.success) {
			throw new CliError(
				"server-refused",
				`${this.server} answered ${method} ${path} with something chopin does not understand.`,
				"Check that --server names a Chopin server, and that chopin and the server are compatible versions.",
			);
		}
		return parsed.data;
	}

	#errorContext() {
		return { server: this.server, version: this.#ctx.version, upgrade: this.#ctx };
	}
}

/** The answer's JSON; undefined for none, text that is not JSON, or JSON nested past MAX_JSON_DEPTH. */
function parseJson(text: string): unknown {
	const read = parseJsonWithin(text);
	return read.ok ? read.value : undefined;
}

/** A short reason for a failed fetch, without the URL (which the message names already). */
export function networkReason(error: unknown): string {
	const code = (error as { code?: unknown }).code;
	if (code === "ConnectionRefused" || code === "ECONNREFUSED") return "the connection was refused";
	if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "the host name does not resolve";
	const message = error instanceof Error ? error.message : String(error);
	return message.replace(/\.$/, "") || "the request failed";
}

function interrupted(): CliError {
	return new CliError("interrupted", "Interrupted.");
}
