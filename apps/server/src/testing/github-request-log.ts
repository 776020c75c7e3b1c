// The emulator's record of every GitHub call it received, for assertions such as "the server
// cached GET /user", and the strict-fake check that fails a test on a call nobody expected.
import { z } from "zod";
import { EmulatorError } from "./github-emulator-errors";

export const requestRecordSchema = z.object({
	seq: z.number().int(),
	/** Milliseconds since the epoch on the emulator's clock. */
	at: z.number(),
	method: z.string(),
	path: z.string(),
	/** Query parameters, with codes and secrets masked. */
	query: z.record(z.string(), z.string()),
	/** The account the request acted for: a valid token's user, the user a code or token was issued to. */
	login: z.string().nullable(),
	/** For API calls: whether an Authorization header came, and whether GitHub would accept it. */
	credential: z.enum(["none", "valid", "invalid"]).nullable(),
	status: z.number().int(),
	/** The injected fault that shaped the answer, if any. */
	fault: z.enum(["status", "rate-limit", "delay", "hang"]).nullable(),
	/** No emulated GitHub endpoint matched; verify() fails while any such record is kept. */
	unexpected: z.boolean(),
});
export type RequestRecord = z.infer<typeof requestRecordSchema>;

export interface RequestFilter {
	method?: string;
	/** An exact path such as "/api/v3/user", or a RegExp. */
	path?: string | RegExp;
	login?: string;
	/** Only answers with this status, e.g. 304 for the conditional requests GitHub answered "not modified". */
	status?: number;
}

const SECRET_PARAMS = new Set(["code", "client_secret", "refresh_token", "access_token"]);

export function maskedQuery(params: URLSearchParams): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [key, value] of params) out[key] = SECRET_PARAMS.has(key) ? "[redacted]" : value;
	return out;
}

export class RequestLog {
	#records: RequestRecord[] = [];
	#seq = 0;

	add(record: Omit<RequestRecord, "seq">): RequestRecord {
		const full = { seq: ++this.#seq, ...record };
		this.#records.push(full);
		return full;
	}

	list(filter: RequestFilter = {}): RequestRecord[] {
		return this.#records.filter(
			(r) =>
				(filter.method === undefined || r.method === filter.method.toUpperCase()) &&
				(filter.path === undefined ||
					(typeof filter.path === "string" ? r.path === filter.path : filter.path.test(r.path))) &&
				(filter.login === undefined || r.login?.toLowerCase() === filter.login.toLowerCase()) &&
				(filter.status === undefined || r.status === filter.status),
		);
	}

	unexpected(): RequestRecord[] {
		return this.#records.filter((r) => r.unexpected);
	}

	clear(): void {
		this.#records = [];
	}

	/** Throws unexpected-calls naming every request that matched no emulated endpoint. */
	verify(): void {
		const calls = this.unexpected().map((r) => `${r.method} ${r.path}`);
		if (calls.length === 0) return;
		throw new EmulatorError(
			"unexpected-calls",
			`The GitHub emulator received ${calls.length} unexpected request${calls.length === 1 ? "" : "s"}: ${calls.join(", ")}.`,
			"Fix the URL the server calls, or teach the emulator the endpoint if the server really needs it (docs/github-emulator.md).",
			calls,
		);
	}
}
