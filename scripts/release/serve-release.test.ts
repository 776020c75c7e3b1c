// The loopback release server the workflows install from: the real script as a process, asked over HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

let dir: string;
let child: Subprocess<"ignore", "pipe", "pipe">;
let origin: string;

beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), "chopin-serve-release-"));
	writeFileSync(join(dir, "install.ps1"), "Write-Host 'hi'\n");
	writeFileSync(join(dir, "install.sh"), "echo hi\n");
	writeFileSync(join(dir, "chopin-linux-x64"), new Uint8Array([0, 1, 2, 255]));
	writeFileSync(join(dir, "SHA256SUMS"), "sums\n");
	child = Bun.spawn([process.execPath, join(import.meta.dir, "serve-release.ts"), dir], {
		stdin: "ignore",
		stdout: "pipe",
		stderr: "pipe",
	});
	// The first line is the origin; the server keeps running after it.
	const reader = child.stdout.getReader();
	let text = "";
	while (!text.includes("\n")) {
		const { value, done } = await reader.read();
		if (done) throw new Error(`serve-release exited: ${await new Response(child.stderr).text()}`);
		text += new TextDecoder().decode(value);
	}
	reader.releaseLock();
	origin = text.trim();
});

afterAll(async () => {
	child?.kill();
	await child?.exited;
	rmSync(dir, { recursive: true, force: true });
});

describe("serve-release.ts", () => {
	test("prints a loopback origin", () => {
		expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
	});

	test("serves the installers as text and every other file as bytes, unchanged", async () => {
		const ps1 = await fetch(`${origin}/install.ps1`);
		expect(ps1.headers.get("content-type")).toBe("text/plain; charset=utf-8");
		expect(await ps1.text()).toBe("Write-Host 'hi'\n");
		expect((await fetch(`${origin}/install.sh`)).headers.get("content-type")).toBe(
			"text/plain; charset=utf-8",
		);
		const binary = await fetch(`${origin}/chopin-linux-x64`);
		expect(binary.headers.get("content-type")).toBe("application/octet-stream");
		expect([...new Uint8Array(await binary.arrayBuffer())]).toEqual([0, 1, 2, 255]);
		expect(await (await fetch(`${origin}/SHA256SUMS`)).text()).toBe("sums\n");
	});

	test("answers 404 for a missing file and for any path outside the directory", async () => {
		for (const path of [
			"/nope",
			"/",
			"/../etc/passwd",
			"/%2e%2e%2fetc%2fpasswd",
			"/sub/install.sh",
			"/.hidden",
			"/%zz",
		]) {
			expect({ path, status: (await fetch(`${origin}${path}`)).status }).toEqual({ path, status: 404 });
		}
	});

	test("refuses a directory that does not exist, with exit 1 and one line", async () => {
		const missing = Bun.spawn(
			[process.execPath, join(import.meta.dir, "serve-release.ts"), join(dir, "none")],
			{
				stdout: "pipe",
				stderr: "pipe",
			},
		);
		expect(await missing.exited).toBe(1);
		expect(await new Response(missing.stderr).text()).toBe(
			`serve-release: ${join(dir, "none")} is not a directory\n`,
		);
	});
});
