// The daemon's list of secrets to mask stays bounded: an issued token is forgotten an hour after it expires, while
// secrets without an end (the machine credential, --env values) are kept; a forgotten token's raw form is still
// masked by its shape.
import { describe, expect, test } from "bun:test";
import { FORGET_AFTER_EXPIRY_MS, Secrets } from "./secrets";

const token = (n: number) => `chopin_p_${String(n).padStart(43, "0")}`;
const b64 = (text: string) => Buffer.from(text).toString("base64");

describe("Secrets", () => {
	test("months of renewals keep only the tokens still live or lately ended, and every lasting secret", () => {
		let now = 0;
		const secrets = new Secrets(() => now);
		secrets.add("a-lasting-env-value");
		// A 15-minute credential renewed every 10 minutes, for 30 days.
		for (let n = 0; n < 30 * 24 * 6; n++) {
			now = n * 10 * 60_000;
			secrets.add(token(n), now + 15 * 60_000);
		}
		// Live or ended within the hour: about 7 tokens, and the lasting secret.
		expect(secrets.size).toBeLessThanOrEqual(
			1 + Math.ceil((15 * 60_000 + FORGET_AFTER_EXPIRY_MS) / (10 * 60_000)),
		);
		expect(secrets.redact(`env ${b64("a-lasting-env-value")}`)).not.toContain(b64("a-lasting-env-value"));
		// The newest token is masked in its encoded forms; an old one, forgotten, only in its raw shape.
		const newest = token(30 * 24 * 6 - 1);
		expect(secrets.redact(b64(newest))).not.toContain(b64(newest));
		expect(secrets.redact(token(0))).not.toContain(token(0));
	});

	test("a token added again with a later expiry is kept until the later one", () => {
		let now = 0;
		const secrets = new Secrets(() => now);
		secrets.add(token(1), 1_000);
		secrets.add(token(1), 10 * FORGET_AFTER_EXPIRY_MS);
		now = 2 * FORGET_AFTER_EXPIRY_MS;
		secrets.add(token(2), now + 1_000);
		expect(secrets.size).toBe(2);
	});
});
