// Failure injection: the next N requests (optionally only those under a path prefix) fail with a
// 5xx, hit a rate limit, arrive late or never get an answer, so a test can prove the server copes.
import { z } from "zod";
import { apiResponse, errorBody } from "./github-shapes";

const common = {
	/** How many matching requests the fault applies to. */
	times: z.number().int().positive().default(1),
	/** Only requests whose path starts with this, e.g. "/api/v3/user" or "/login/oauth/access_token". */
	pathPrefix: z.string().startsWith("/").optional(),
	method: z
		.string()
		.transform((m) => m.toUpperCase())
		.optional(),
};

export const faultSchema = z.discriminatedUnion("kind", [
	z.strictObject({ ...common, kind: z.literal("status"), status: z.number().int().min(500).max(599) }),
	z.strictObject({
		...common,
		kind: z.literal("rate-limit"),
		/** primary: x-ratelimit-remaining 0 and x-ratelimit-reset; secondary: retry-after. */
		style: z.enum(["primary", "secondary"]),
		/** GitHub uses both; by default primary answers 403 and secondary 429. */
		status: z.union([z.literal(403), z.literal(429)]).optional(),
		/** Seconds until x-ratelimit-reset (primary) or the retry-after value (secondary). */
		seconds: z.number().int().positive().default(60),
	}),
	/** The answer comes after ms on the emulator's clock (a ManualClock must be advanced). */
	z.strictObject({ ...common, kind: z.literal("delay"), ms: z.number().int().nonnegative() }),
	/** No answer until the client gives up, releaseHeld() or clearFaults() is called, or the emulator stops. */
	z.strictObject({ ...common, kind: z.literal("hang") }),
]);

export type Fault = z.infer<typeof faultSchema>;
export type FaultInput = z.input<typeof faultSchema>;

interface Pending {
	fault: Fault;
	left: number;
}

export class FaultQueue {
	#pending: Pending[] = [];

	add(fault: Fault): void {
		this.#pending.push({ fault, left: fault.times });
	}

	clear(): void {
		this.#pending = [];
	}

	/** The first queued fault that matches, used up by one; faults apply in the order they were added. */
	take(method: string, path: string): Fault | undefined {
		const hit = this.#pending.find(
			(p) =>
				(p.fault.pathPrefix === undefined || path.startsWith(p.fault.pathPrefix)) &&
				(p.fault.method === undefined || p.fault.method === method),
		);
		if (!hit) return undefined;
		if (--hit.left === 0) this.#pending = this.#pending.filter((p) => p !== hit);
		return hit.fault;
	}

	get size(): number {
		return this.#pending.length;
	}
}

/**
 * A server error as GitHub sends one: 500 is JSON, the gateway errors in front of it are HTML
 * pages, so a client must not assume every error body parses.
 */
export function serverErrorResponse(status: number): Response {
	if (status === 500) return apiResponse(errorBody(500, "Server Error"), 500);
	const text =
		{ 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout" }[status] ?? "Server Error";
	return new Response(
		`<!DOCTYPE html><html><head><title>${text}</title></head><body><h1>${status} ${text}</h1></body></html>`,
		{
			status,
			headers: { "content-type": "text/html; charset=utf-8" },
		},
	);
}
