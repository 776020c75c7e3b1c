// What every emulator route handler gets (the emulated GitHub's state and its URLs) and the
// small path matcher that finds the handler, so an unmatched request can be told apart as unexpected.
import type { Clock } from "../../../../packages/agent-link/src/clock";
import type { Fixture } from "./github-fixture";
import type { RateLimiter } from "./github-rate-limit";
import type { Urls } from "./github-shapes";
import type { TokenStore } from "./github-tokens";
import type { GitHubWorld } from "./github-world";

export type App = Fixture["apps"][number];

export interface EmulatorState {
	clock: Clock;
	urls: Urls;
	apps: Map<string, App>;
	world: GitHubWorld;
	tokens: TokenStore;
	rates: RateLimiter;
}

export interface RouteRequest {
	req: Request;
	url: URL;
	/** The pattern's capture groups, decoded. */
	params: string[];
	/** Whom the request acted for, set by the handler for the request log. */
	login: string | null;
	/** Set by API handlers: whether an Authorization header came and was accepted. */
	credential: "none" | "valid" | "invalid" | null;
}

export interface Route {
	method: string;
	pattern: RegExp;
	handle(state: EmulatorState, request: RouteRequest): Response | Promise<Response>;
}

export function matchRoute(
	routes: readonly Route[],
	method: string,
	path: string,
): { route: Route; params: string[] } | undefined {
	for (const route of routes) {
		if (route.method !== method) continue;
		const m = route.pattern.exec(path);
		if (!m) continue;
		try {
			return { route, params: m.slice(1).map((p) => decodeURIComponent(p)) };
		} catch {
			return undefined; // a malformed escape matches nothing GitHub serves
		}
	}
	return undefined;
}
