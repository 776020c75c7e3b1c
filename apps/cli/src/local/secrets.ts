// What this process must never print: the secrets it learns as it runs, and every token shape.
import { createRedactor, redactTokens } from "@chopin/agent-link/redact";

/**
 * The secrets this process knows (the machine credential, issued tokens, --env values), added
 * as they are learnt. Token shapes are always masked; these are masked as well, as they are and
 * in their JSON-escaped, URL-encoded and base64 forms (createRedactor), since log lines are JSON.
 */
export class Secrets {
	/** Each secret with the time after which it is forgotten (Infinity: kept for the process's life). */
	readonly #values = new Map<string, number>();
	readonly #now: () => number;
	/** Built on the first redact after a change: compiling it costs a `chopin status` that prints no error ~0.3 ms. */
	#redact: ((text: string) => string) | undefined = redactTokens;

	constructor(now: () => number = Date.now) {
		this.#now = now;
	}

	/**
	 * A secret to mask from now on. One that expires (an issued token, with its `expiresAt`) is forgotten an hour
	 * after it ends: a daemon renewing its Planners' credentials for months would otherwise mask (and compile into
	 * its redactor) thousands of dead tokens. A forgotten token's raw form is still masked by its shape.
	 */
	add(secret: string | undefined, expiresAt?: number): void {
		if (secret === undefined || secret.length === 0) return;
		const until = expiresAt === undefined ? Number.POSITIVE_INFINITY : expiresAt + FORGET_AFTER_EXPIRY_MS;
		const known = this.#values.get(secret);
		if (known !== undefined && known >= until) return;
		this.#values.set(secret, until);
		this.#forgetExpired();
		this.#redact = undefined;
	}

	/** How many secrets are masked now (for tests). */
	get size(): number {
		return this.#values.size;
	}

	redact(text: string): string {
		this.#redact ??= createRedactor(this.#values.keys());
		return this.#redact(text);
	}

	#forgetExpired(): void {
		const now = this.#now();
		for (const [secret, until] of this.#values) if (until < now) this.#values.delete(secret);
	}
}

/** How long an expired token is still masked in its encoded forms (its holders may print it late; clocks differ). */
export const FORGET_AFTER_EXPIRY_MS = 60 * 60_000;
