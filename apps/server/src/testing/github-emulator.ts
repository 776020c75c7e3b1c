// The GitHub emulator: a real HTTP server on loopback that answers the part of GitHub's OAuth
// web flow and REST API the Chopin server uses, so GitHub mode is tested with the server's own
// code. It is a strict fake: a call to anything it does not emulate is recorded and fails verify().
import { z } from "zod";
import { type Clock, systemClock } from "../../../../packages/agent-link/src/clock";
import { apiRoutes } from "./github-api-routes";
import { controlResponse } from "./github-control-routes";
import { EmulatorError } from "./github-emulator-errors";
import { type Fault, type FaultInput, FaultQueue, faultSchema, serverErrorResponse } from "./github-faults";
import {
	type AddTokenInput,
	addTokenSchema,
	type Fixture,
	type FixtureInput,
	parseFixture,
	type Role,
	type UserInput,
} from "./github-fixture";
import { type Caller, primaryLimitResponse, RateLimiter, secondaryLimitResponse } from "./github-rate-limit";
import { maskedQuery, type RequestFilter, RequestLog, type RequestRecord } from "./github-request-log";
import { type EmulatorState, matchRoute, type RouteRequest } from "./github-routing";
import { API_PREFIX, apiResponse, errorBody } from "./github-shapes";
import { TokenStore } from "./github-tokens";
import { webRoutes } from "./github-web-routes";
import { GitHubWorld, type User } from "./github-world";

export interface GitHubEmulatorOptions {
	fixture: FixtureInput | Fixture;
	/** Token and code lifetimes, rate-limit windows and delay faults run on it. Default: the system clock. */
	clock?: Clock;
	/** Default 0: any free port. */
	port?: number;
	/** Default 127.0.0.1: loopback only. */
	hostname?: string;
}

/** The variables that point the Chopin server at the emulator. */
export interface GitHubEnv {
	AUTH_MODE: "github";
	GITHUB_URL: string;
	GITHUB_API_URL: string;
	GITHUB_CLIENT_ID: string;
	GITHUB_CLIENT_SECRET: string;
}

const ROUTES = [...webRoutes, ...apiRoutes];
const CONTROL_PREFIX = "/_emulator";

export class GitHubEmulator {
	/** GITHUB_URL: the emulator's origin. */
	readonly url: string;
	/** GITHUB_API_URL: the REST API base under the origin. */
	readonly apiUrl: string;
	readonly port: number;
	readonly clock: Clock;
	readonly #state: EmulatorState;
	readonly #log = new RequestLog();
	readonly #faults = new FaultQueue();
	readonly #held = new Set<() => void>();
	readonly #server: ReturnType<typeof Bun.serve>;
	#stopped = false;

	constructor(options: GitHubEmulatorOptions) {
		const fixture = parseFixture(options.fixture);
		this.clock = options.clock ?? systemClock({ unref: true });
		const tokens = new TokenStore(this.clock);
		for (const t of fixture.tokens) tokens.add(t.login, t.token, t.expiresAt ?? null);
		const urls = { web: "", api: "" };
		this.#state = {
			clock: this.clock,
			urls,
			apps: new Map(fixture.apps.map((app) => [app.clientId, app])),
			world: new GitHubWorld(fixture),
			tokens,
			rates: new RateLimiter(this.clock),
		};
		// A delayed or held answer may sit silent for longer than Bun's default 10 s idle timeout.
		this.#server = Bun.serve({
			hostname: options.hostname ?? "127.0.0.1",
			port: options.port ?? 0,
			idleTimeout: 0,
			fetch: (req) => this.#fetch(req),
		});
		this.port = this.#server.port!;
		const hostname = this.#server.hostname!;
		this.url = `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${this.port}`;
		this.apiUrl = `${this.url}${API_PREFIX}`;
		urls.web = this.url;
		urls.api = this.apiUrl;
	}

	/** Environment for a Chopin server in GitHub mode; the first app's credentials unless one is named. */
	env(clientId?: string): GitHubEnv {
		const app = clientId ? this.#state.apps.get(clientId) : this.#state.apps.values().next().value;
		if (!app)
			throw new EmulatorError(
				"invalid-control-request",
				`No app with client id "${clientId}" is in the fixture.`,
			);
		return {
			AUTH_MODE: "github",
			GITHUB_URL: this.url,
			GITHUB_API_URL: this.apiUrl,
			GITHUB_CLIENT_ID: app.clientId,
			GITHUB_CLIENT_SECRET: app.clientSecret,
		};
	}

	addUser(user: UserInput): User {
		return this.#state.world.addUser(user);
	}

	setPermission(fullName: string, login: string, role: Role): void {
		this.#state.world.setPermission(fullName, login, role);
	}

	removePermission(fullName: string, login: string): void {
		this.#state.world.setPermission(fullName, login, null);
	}

	/** The user leaves an organization: GET /user/orgs stops listing it (an ADMIT org:<name> check fails). */
	leaveOrganization(login: string, org: string): void {
		this.#state.world.leaveOrganization(login, org);
	}

	/** The user's primary rate limit as the x-ratelimit-* headers would say it now (a 304 spends none of it). */
	rateLimit(login: string): { limit: number; used: number; remaining: number; reset: number } {
		const user = this.#state.world.requireUser(login);
		const state = this.#state.rates.state({ kind: "user", id: user.id }, false);
		return {
			limit: state.limit,
			used: state.used,
			remaining: Math.max(0, state.limit - state.used),
			reset: Math.ceil(state.resetAt / 1000),
		};
	}

	/** Issues a token outside the OAuth flow (like a PAT); returns it. */
	addToken(input: AddTokenInput): string {
		const parsed = addTokenSchema.safeParse(input);
		if (!parsed.success) {
			throw new EmulatorError(
				"invalid-control-request",
				`The token request is not valid: ${z.prettifyError(parsed.error)}`,
			);
		}
		const user = this.#state.world.requireUser(parsed.data.login);
		return this.#state.tokens.add(user.login, parsed.data.token, parsed.data.expiresAt ?? null);
	}

	/** An access or refresh token stops working at once. */
	revokeToken(token: string): void {
		this.#state.tokens.revoke(token);
	}

	/** An access or refresh token reaches the end of its life now. */
	expireToken(token: string): void {
		this.#state.tokens.expire(token);
	}

	/** The user revoked the app's authorization (every app's without a client id). */
	revokeAuthorization(login: string, clientId?: string): void {
		this.#state.tokens.revokeAuthorization(this.#state.world.requireUser(login).login, clientId);
	}

	/** Queues a fault for the next matching requests (see FaultInput). */
	inject(fault: FaultInput): void {
		const parsed = faultSchema.safeParse(fault);
		if (!parsed.success) {
			throw new EmulatorError(
				"invalid-control-request",
				`The fault is not valid: ${z.prettifyError(parsed.error)}`,
			);
		}
		this.#faults.add(parsed.data);
	}

	/** Drops queued faults and lets held requests go on. */
	clearFaults(): void {
		this.#faults.clear();
		this.releaseHeld();
	}

	/** How many requests a hang fault is holding right now. */
	get held(): number {
		return this.#held.size;
	}

	/** Lets every request held by a hang fault go on to its normal answer. */
	releaseHeld(): void {
		for (const release of [...this.#held]) release();
	}

	/** The GitHub calls received so far, oldest first. */
	requests(filter?: RequestFilter): RequestRecord[] {
		return this.#log.list(filter);
	}

	clearRequests(): void {
		this.#log.clear();
	}

	unexpected(): RequestRecord[] {
		return this.#log.unexpected();
	}

	/** Throws unexpected-calls when any request matched nothing the emulator serves (call it in afterEach). */
	verify(): void {
		this.#log.verify();
	}

	async stop(): Promise<void> {
		if (this.#stopped) return;
		this.#stopped = true;
		this.releaseHeld();
		await this.#server.stop(true);
	}

	async [Symbol.asyncDispose](): Promise<void> {
		await this.stop();
	}

	async #fetch(req: Request): Promise<Response> {
		const url = new URL(req.url);
		const path = url.pathname;
		if (path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`)) {
			return controlResponse(this, req, path.slice(CONTROL_PREFIX.length));
		}
		const base = { at: this.clock.now(), method: req.method, path, query: maskedQuery(url.searchParams) };
		const match = matchRoute(ROUTES, req.method, path);
		if (!match) {
			this.#log.add({ ...base, login: null, credential: null, status: 404, fault: null, unexpected: true });
			return apiResponse(errorBody(404, "Not Found"), 404);
		}
		const request: RouteRequest = { req, url, params: match.params, login: null, credential: null };
		const fault = this.#faults.take(req.method, path);
		let response: Response | undefined;
		if (fault) response = await this.#applyFault(fault, request);
		response ??= await match.route.handle(this.#state, request);
		const { login, credential } = request;
		this.#log.add({
			...base,
			login,
			credential,
			status: response.status,
			fault: fault?.kind ?? null,
			unexpected: false,
		});
		return response;
	}

	/** Answers for the fault, or returns undefined once a delay or hang has passed and the request goes on. */
	async #applyFault(fault: Fault, request: RouteRequest): Promise<Response | undefined> {
		switch (fault.kind) {
			case "status":
				return serverErrorResponse(fault.status);
			case "rate-limit": {
				const caller = this.#caller(request.req);
				const state = this.#state.rates.state(caller, false);
				if (fault.style === "secondary") return secondaryLimitResponse(state, fault.seconds, fault.status);
				const resetAt = this.clock.now() + fault.seconds * 1000;
				return primaryLimitResponse(caller, { ...state, resetAt }, fault.status);
			}
			case "delay":
				await this.clock.sleep(fault.ms, request.req.signal).catch(() => {});
				return undefined;
			case "hang":
				await new Promise<void>((resolve) => {
					const release = () => {
						this.#held.delete(release);
						resolve();
					};
					this.#held.add(release);
					if (request.req.signal.aborted) release();
					else request.req.signal.addEventListener("abort", release, { once: true });
				});
				return undefined;
		}
	}

	/** Whom a rate-limit message names: the token's user, or the caller's address. */
	#caller(req: Request): Caller {
		const token = /^(?:bearer|token)\s+(\S+)/i.exec(req.headers.get("authorization") ?? "")?.[1];
		const login = token ? this.#state.tokens.resolve(token) : undefined;
		const user = login ? this.#state.world.user(login) : undefined;
		return user ? { kind: "user", id: user.id } : { kind: "anonymous" };
	}
}

/** Starts an emulator; stop it with `await emulator.stop()` (or `await using`). */
export async function startGitHubEmulator(options: GitHubEmulatorOptions): Promise<GitHubEmulator> {
	return new GitHubEmulator(options);
}
