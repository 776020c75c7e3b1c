import { expect, test } from "bun:test";
import { SecretBox, SecretBoxError } from "./secret-box";

const key = () => crypto.getRandomValues(new Uint8Array(32));

test("seals and opens; the same plaintext seals differently each time", async () => {
	const box = new SecretBox(key());
	const a = await box.seal("ghu_secret", "session:1:access");
	const b = await box.seal("ghu_secret", "session:1:access");
	expect(a[0]).toBe(1);
	expect(a.length).toBe(1 + 12 + "ghu_secret".length + 16);
	expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
	expect(Buffer.from(a).toString("latin1")).not.toContain("ghu_secret");
	expect(await box.open(a, "session:1:access")).toBe("ghu_secret");
	expect(await box.openText(await box.sealText("état", "cookie"), "cookie")).toBe("état");
});

test("another purpose, another key, or a changed byte does not open", async () => {
	const bytes = key();
	const box = new SecretBox(bytes);
	const sealed = await box.seal("ghr_refresh", "session:1:refresh");
	await expect(box.open(sealed, "session:2:refresh")).rejects.toBeInstanceOf(SecretBoxError);
	await expect(new SecretBox(key()).open(sealed, "session:1:refresh")).rejects.toBeInstanceOf(SecretBoxError);
	const changed = new Uint8Array(sealed);
	changed[changed.length - 1]! ^= 1;
	await expect(box.open(changed, "session:1:refresh")).rejects.toBeInstanceOf(SecretBoxError);
	await expect(box.open(sealed.subarray(0, 10), "session:1:refresh")).rejects.toBeInstanceOf(SecretBoxError);
	await expect(box.openText("not base64url!", "x")).rejects.toBeInstanceOf(SecretBoxError);
	// The caller's key bytes are copied, so changing them later changes nothing.
	bytes.fill(0);
	expect(await box.open(sealed, "session:1:refresh")).toBe("ghr_refresh");
});
