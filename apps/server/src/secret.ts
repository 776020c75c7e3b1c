// A value that must never reach a log line, an error message or a JSON response by accident.
import { inspect } from "node:util";

const REDACTED = "[redacted]";

/**
 * Wraps a secret so that printing, logging or serialising the object that holds it shows
 * "[redacted]". Only `reveal()` gives the value, which makes every use easy to find.
 */
export class Secret<T = string> {
	readonly #value: T;

	constructor(value: T) {
		this.#value = value;
	}

	reveal(): T {
		return this.#value;
	}

	toString(): string {
		return REDACTED;
	}

	toJSON(): string {
		return REDACTED;
	}

	[inspect.custom](): string {
		return `Secret(${REDACTED})`;
	}
}
