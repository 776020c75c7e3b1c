import { describe, expect, test } from "bun:test";
import { join } from "node:path";

const FIXTURE = join(import.meta.dir, "..", "testing", "fixtures", "write-out.ts");

async function run(argv: string[]) {
	const child = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
	const [stdout, stderr, code] = await Promise.all([
		new Response(child.stdout).text(),
		new Response(child.stderr).text(),
		child.exited,
	]);
	return { stdout, stderr, code };
}

describe("processWriter on a real process", () => {
	test("a pipe that fills (non-blocking, EAGAIN) still gets every byte, in order", async () => {
		// The reader starts late, so the 64 KiB pipe is full while most of it is written.
		const { stdout, stderr, code } = await run([
			"bash",
			"-c",
			`set -o pipefail; "${process.execPath}" "${FIXTURE}" big | { sleep 0.2; cat; }`,
		]);
		expect({ stderr, code }).toEqual({ stderr: "", code: 0 });
		const lines = stdout.split("\n");
		expect(lines).toHaveLength(18);
		for (let i = 0; i < 16; i++)
			expect(lines[i]).toBe(`${String(i).padStart(2, "0")}${"x".repeat(64 * 1024 - 3)}`);
		expect(lines.slice(16)).toEqual(["last", ""]);
	});

	test("a reader that goes away (`| head`) ends the writing quietly, exit 0", async () => {
		const { stdout, stderr, code } = await run([
			"bash",
			"-c",
			`set -o pipefail; "${process.execPath}" "${FIXTURE}" lines | head -n 2`,
		]);
		expect(stdout).toBe("line 0\nline 1\n");
		expect(stderr).toBe("wrote them all\n");
		expect(code).toBe(0);
	});

	test("a pipe is not a terminal, and writing after the check still works", async () => {
		const { stdout, stderr, code } = await run([process.execPath, FIXTURE, "tty"]);
		expect({ stdout, stderr, code }).toEqual({ stdout: "after the check\n", stderr: "false\n", code: 0 });
	});
});
