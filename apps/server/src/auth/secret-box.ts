// Secrets at rest (GitHub tokens, the OAuth state cookie): AES-256-GCM through WebCrypto with the server's secret key.

/** The first byte of every sealed value, so a later format can be told apart. */
const VERSION = 1;
const IV_BYTES = 12;

/** A sealed value that cannot be opened: another key, another purpose, or changed bytes. */
export class SecretBoxError extends Error {
	readonly code = "secret-unreadable";
	constructor(message = "A stored secret cannot be decrypted with this server's key.") {
		super(message);
		this.name = "SecretBoxError";
	}
}

/**
 * Seals and opens short secrets. `purpose` is bound into each value as GCM's additional data:
 * a value sealed for one row and column (say `session:<id>:access`) does not open for another,
 * so ciphertexts cannot be swapped between rows or columns unnoticed.
 */
export class SecretBox {
	readonly #key: Promise<CryptoKey>;

	constructor(key: Uint8Array) {
		if (key.length !== 32) throw new Error("SecretBox needs a 32-byte key");
		// A copy, so the caller's buffer is never handed to WebCrypto (nor changed by it).
		this.#key = crypto.subtle.importKey("raw", new Uint8Array(key), "AES-GCM", false, ["encrypt", "decrypt"]);
	}

	/** version (1 byte) ‖ IV (12 random bytes) ‖ ciphertext with its 16-byte tag. */
	async seal(plaintext: string, purpose: string): Promise<Uint8Array> {
		const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
		const sealed = await crypto.subtle.encrypt(
			{ name: "AES-GCM", iv, additionalData: new TextEncoder().encode(purpose) },
			await this.#key,
			new TextEncoder().encode(plaintext),
		);
		const out = new Uint8Array(1 + IV_BYTES + sealed.byteLength);
		out[0] = VERSION;
		out.set(iv, 1);
		out.set(new Uint8Array(sealed), 1 + IV_BYTES);
		return out;
	}

	/** The plaintext, or SecretBoxError for a value this key and purpose did not seal. */
	async open(value: Uint8Array, purpose: string): Promise<string> {
		// A copy over a plain ArrayBuffer, as WebCrypto wants (the store may hand out a view of a larger buffer).
		const sealed = new Uint8Array(value);
		if (sealed.length < 1 + IV_BYTES + 16 || sealed[0] !== VERSION) throw new SecretBoxError();
		try {
			const plain = await crypto.subtle.decrypt(
				{
					name: "AES-GCM",
					iv: sealed.subarray(1, 1 + IV_BYTES),
					additionalData: new TextEncoder().encode(purpose),
				},
				await this.#key,
				sealed.subarray(1 + IV_BYTES),
			);
			return new TextDecoder().decode(plain);
		} catch {
			throw new SecretBoxError();
		}
	}

	/** seal, as base64url text (for a cookie). */
	async sealText(plaintext: string, purpose: string): Promise<string> {
		return Buffer.from(await this.seal(plaintext, purpose)).toString("base64url");
	}

	/** open for sealText's output; anything else is SecretBoxError. */
	async openText(text: string, purpose: string): Promise<string> {
		if (!/^[A-Za-z0-9_-]+$/.test(text)) throw new SecretBoxError();
		return this.open(new Uint8Array(Buffer.from(text, "base64url")), purpose);
	}
}
