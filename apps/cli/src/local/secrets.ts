// What this process must never print: the secrets it learns as it runs, and every token shape.
import { createRedactor, redactTokens } from "@chopin/agent-link/redact";

/**
 * The secrets this process knows (the machine credential, issued tokens, --env values), added
 * as they are learnt. Token shapes are always masked; these are masked as well, as they are and
 * in their JSON-escaped, URL-encoded and base64 forms (createRedactor), since log lines are JSON.
 */
export class Secrets {
	readonly #values = new Set<string>();
	/** Built on the first redact after an add: compiling it costs a `chopin status` that prints no error ~0.3 ms. */
	#redact: ((text: string) => string) | undefined = redactTokens;

	add(secret: string | undefined): void {
		if (secret === undefined || secret.length === 0 || this.#values.has(secret)) return;
		this.#values.add(secret);
		this.#redact = undefined;
	}

	redact(text: string): string {
		this.#redact ??= createRedactor(this.#values);
		return this.#redact(text);
	}
}
