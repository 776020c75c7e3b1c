// A small router: method + path patterns to handlers, producing one fetch(req, server?) for Bun.serve and for tests.
import type { Server } from "bun";
import type { z } from "zod";
import { DomainError } from "../domain-error";
import type { Logger } from "../log";
import { readBytes, readJson } from "./body";
import { HttpError, notFound } from "./errors";
import { type SecurityHeaderOptions, withSecurityHeaders } from "./security-headers";
import type { SocketData } from "./sockets";

export type Method = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

/** What a handler gets: the request, its parsed URL and path parameters, and body readers with the limit applied. */
export interface RouteContext {
	readonly req: Request;
	readonly url: URL;
	/** `:name` segments, decoded; a trailing `*` is `params["*"]`. */
	readonly params: Readonly<Record<string, string>>;
	/** Bun's server; undefined when a test calls fetch without one. */
	readonly server: Server<SocketData> | undefined;
	/** The JSON body, validated (415, 413, 400 invalid-json, 400 invalid-request). */
	json<S extends z.ZodType>(schema: S): Promise<z.output<S>>;
	/** The raw body within MAX_BODY_BYTES (413 beyond it). */
	bytes(): Promise<Uint8Array>;
	/**
	 * Upgrades to a WebSocket whose handlers are registered under `data.kind` (see sockets.ts).
	 * Returns the response to hand back, or undefined when there is no server or the upgrade failed.
	 * Check everything (auth, Origin, subprotocol) before calling it: refusals are HTTP responses.
	 */
	upgrade(data: SocketData, options?: { headers?: Record<string, string> }): Response | undefined;
}

export type Handler = (ctx: RouteContext) => Response | Promise<Response>;

export interface RouterOptions extends SecurityHeaderOptions {
	/** MAX_BODY_BYTES. */
	maxBodyBytes: number;
	log: Logger;
	/**
	 * PUBLIC_URL's origin. A POST, PUT, PATCH or DELETE that carries an Origin header must carry
	 * this one (403 origin-forbidden); browsers always send it, CLIs and agents send none.
	 */
	origin?: string | (() => string);
	/**
	 * Asked for a request no route's path matches, before the 404 (the page bundle's chunks):
	 * its answer gets the security headers like any other; undefined is the usual 404.
	 */
	fallback?: (req: Request, url: URL) => Promise<Response | undefined>;
}

type Segment = { kind: "literal"; value: string } | { kind: "param"; name: string } | { kind: "rest" };

interface Route {
	method: Method;
	pattern: string;
	segments: Segment[];
	handler: Handler;
}

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * True when the request carries an Origin header other than ours. Browsers send Origin on
 * writes and WebSocket upgrades; CLIs and agents send none, which is not foreign.
 */
export function isForeignOrigin(req: Request, ownOrigin: string): boolean {
	const origin = req.headers.get("origin");
	return origin !== null && origin !== ownOrigin;
}
const upgraded = new WeakSet<Response>();

/** True for the placeholder a handler returns after a WebSocket upgrade; Bun must then get undefined. */
export function isUpgradeResponse(res: Response): boolean {
	return upgraded.has(res);
}

export class Router {
	readonly #routes: Route[] = [];
	readonly #options: RouterOptions;

	constructor(options: RouterOptions) {
		this.#options = options;
	}

	get(pattern: string, handler: Handler): this {
		return this.route("GET", pattern, handler);
	}
	post(pattern: string, handler: Handler): this {
		return this.route("POST", pattern, handler);
	}
	put(pattern: string, handler: Handler): this {
		return this.route("PUT", pattern, handler);
	}
	patch(pattern: string, handler: Handler): this {
		return this.route("PATCH", pattern, handler);
	}
	delete(pattern: string, handler: Handler): this {
		return this.route("DELETE", pattern, handler);
	}

	/**
	 * Adds a route. Patterns are absolute paths of literal segments, `:name` parameters and an
	 * optional final `*` that takes the rest. A GET route also answers HEAD.
	 */
	route(method: Method, pattern: string, handler: Handler): this {
		const segments = parsePattern(pattern);
		const key = (r: Route) =>
			`${r.method} ${r.segments.map((s) => (s.kind === "literal" ? s.value : s.kind)).join("/")}`;
		const route = { method, pattern, segments, handler };
		const clash = this.#routes.find((r) => key(r) === key(route));
		if (clash) throw new Error(`route ${method} ${pattern} is already registered as ${clash.pattern}`);
		this.#routes.push(route);
		return this;
	}

	/** The handler for Bun.serve and for tests: always resolves to a Response, never throws. */
	readonly fetch = async (req: Request, server?: Server<SocketData>): Promise<Response> => {
		const url = new URL(req.url);
		let res: Response;
		try {
			res = await this.#dispatch(req, url, server);
		} catch (error) {
			res = this.#errorResponse(req, url, error);
		}
		this.#options.log.debug("request", { method: req.method, path: url.pathname, status: res.status });
		if (isUpgradeResponse(res)) return res;
		if (req.method === "HEAD" && res.body)
			res = new Response(null, { status: res.status, statusText: res.statusText, headers: res.headers });
		return withSecurityHeaders(req, res, this.#options);
	};

	async #dispatch(req: Request, url: URL, server: Server<SocketData> | undefined): Promise<Response> {
		const parts = splitPath(url.pathname);
		if (!parts) throw notFound();
		const method = req.method.toUpperCase();
		const matches: { route: Route; params: Record<string, string> }[] = [];
		for (const route of this.#routes) {
			const params = match(route.segments, parts);
			if (params) matches.push({ route, params });
		}
		if (matches.length === 0) {
			const fallen = await this.#options.fallback?.(req, url);
			if (fallen) return fallen;
			throw notFound();
		}
		const wanted = (m: Method) =>
			matches.filter((x) => x.route.method === m).sort((a, b) => specificity(a.route, b.route));
		const chosen = wanted(method as Method)[0] ?? (method === "HEAD" ? wanted("GET")[0] : undefined);
		if (!chosen) {
			const allow = new Set(matches.map((m) => m.route.method));
			if (allow.has("GET")) allow.add("HEAD");
			throw new HttpError(405, "method-not-allowed", `${method} is not allowed here.`, undefined, undefined, {
				allow: [...allow].sort().join(", "),
			});
		}
		if (UNSAFE.has(method)) this.#checkOrigin(req);
		const limit = { maxBytes: this.#options.maxBodyBytes };
		const ctx: RouteContext = {
			req,
			url,
			params: chosen.params,
			server,
			json: (schema) => readJson(req, schema, limit),
			bytes: () => readBytes(req, limit),
			upgrade: (data, options) => {
				if (!server?.upgrade(req, { data, headers: options?.headers })) return undefined;
				const placeholder = new Response(null, { status: 200 });
				upgraded.add(placeholder);
				return placeholder;
			},
		};
		return await chosen.route.handler(ctx);
	}

	#checkOrigin(req: Request): void {
		const origin = req.headers.get("origin");
		// A function is read per request: PUBLIC_URL is final only once the server listens.
		const own = typeof this.#options.origin === "function" ? this.#options.origin() : this.#options.origin;
		if (origin === null || own === undefined || origin === own) return;
		throw new HttpError(
			403,
			"origin-forbidden",
			"This request comes from another site.",
			`Open ${own} instead.`,
		);
	}

	#errorResponse(req: Request, url: URL, error: unknown): Response {
		if (error instanceof HttpError) return error.toResponse();
		// A domain service's refusal carries the status a route answers with.
		if (error instanceof DomainError) {
			return new HttpError(error.status, error.code, error.message, error.hint, error.details).toResponse();
		}
		// The log line is redacted by the logger; the response says nothing about the cause.
		this.#options.log.error("request failed", { method: req.method, path: url.pathname, error });
		return new HttpError(
			500,
			"internal",
			"Something went wrong on the server.",
			"Try again; if it keeps happening, tell the server's operator.",
		).toResponse();
	}
}

function parsePattern(pattern: string): Segment[] {
	if (!pattern.startsWith("/")) throw new Error(`route pattern ${pattern} must start with /`);
	const raw = pattern === "/" ? [] : pattern.slice(1).split("/");
	return raw.map((part, i): Segment => {
		if (part === "*") {
			if (i !== raw.length - 1) throw new Error(`route pattern ${pattern}: * must be the last segment`);
			return { kind: "rest" };
		}
		if (part.startsWith(":")) {
			if (!/^:[A-Za-z_]\w*$/.test(part)) throw new Error(`route pattern ${pattern}: bad parameter ${part}`);
			return { kind: "param", name: part.slice(1) };
		}
		if (!part) throw new Error(`route pattern ${pattern} has an empty segment`);
		return { kind: "literal", value: part };
	});
}

/** Decoded path segments, or undefined for a path that cannot be decoded. `/` is []. */
function splitPath(pathname: string): string[] | undefined {
	const raw = pathname === "/" ? [] : pathname.slice(1).split("/");
	try {
		return raw.map((p) => decodeURIComponent(p));
	} catch {
		return undefined;
	}
}

function match(segments: Segment[], parts: string[]): Record<string, string> | undefined {
	const params: Record<string, string> = {};
	for (let i = 0; i < segments.length; i++) {
		const seg = segments[i]!;
		if (seg.kind === "rest") {
			if (i >= parts.length) return undefined;
			params["*"] = parts.slice(i).join("/");
			return params;
		}
		const part = parts[i];
		if (part === undefined || part === "") return undefined;
		if (seg.kind === "literal" && seg.value !== part) return undefined;
		if (seg.kind === "param") params[seg.name] = part;
	}
	return segments.length === parts.length ? params : undefined;
}

/** Literal segments beat parameters, which beat a rest: `/documents/new` wins over `/documents/:id`. */
function specificity(a: Route, b: Route): number {
	const rank = { literal: 0, param: 1, rest: 2 } as const;
	const n = Math.max(a.segments.length, b.segments.length);
	for (let i = 0; i < n; i++) {
		const ra = a.segments[i] ? rank[a.segments[i]!.kind] : 3;
		const rb = b.segments[i] ? rank[b.segments[i]!.kind] : 3;
		if (ra !== rb) return ra - rb;
	}
	return 0;
}
