// The standalone emulator: argument parsing on its own, and the CLI as a real child process that
// prints the server's variables (never the secret), answers /user and exits on SIGTERM.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type GitHubEmulator, startGitHubEmulator } from "./github-emulator";
import { CliUsageError, parseCliArgs, runCli } from "./github-emulator-cli";
import { CLIENT_ID, CLIENT_SECRET, PAT, testFixture } from "./github-emulator-test-kit";

const CLI = join(import.meta.dir, "github-emulator-cli.ts");
const dir = mkdtempSync(join(tmpdir(), "chopin-gh-cli-"));
const fixturePath = join(dir, "fixture.json");
writeFileSync(fixturePath, JSON.stringify(testFixture()));

const children: Bun.Subprocess[] = [];
const emulators: GitHubEmulator[] = [];

afterEach(async () => {
	for (const child of children.splice(0)) {
		child.kill("SIGKILL");
		await child.exited;
	}
	for (const emulator of emulators.splice(0)) await emulator.stop();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("parseCliArgs", () => {
	test("reads the fixture, port and host, with defaults", () => {
		expect(parseCliArgs(["--fixture", "f.json"])).toEqual({
			fixturePath: "f.json",
			port: 9000,
			host: "127.0.0.1",
		});
		expect(parseCliArgs(["--fixture=f.json", "--port", "0", "--host", "::1"])).toEqual({
			fixturePath: "f.json",
			port: 0,
			host: "::1",
		});
		expect(parseCliArgs(["-h"])).toBe("help");
	});

	test("refuses a missing fixture, a bad port and unknown options", () => {
		expect(() => parseCliArgs([])).toThrow(new CliUsageError("--fixture is required."));
		expect(() => parseCliArgs(["--fixture", "f", "--port", "70000"])).toThrow(
			'--port must be an integer from 0 to 65535 (got "70000").',
		);
		expect(() => parseCliArgs(["--fixture", "f", "--verbose"])).toThrow(CliUsageError);
		expect(() => parseCliArgs(["--fixture", "f", "extra"])).toThrow(CliUsageError);
	});
});

describe("runCli", () => {
	test("a port in use is a clear error with exit code 1", async () => {
		const taken = await startGitHubEmulator({ fixture: testFixture() });
		emulators.push(taken);
		const lines: string[] = [];
		const io = {
			stdout: (l: string) => lines.push(l),
			stderr: (l: string) => lines.push(l),
			stopRequested: new Promise<string>(() => {}),
		};
		expect(await runCli({ fixturePath, port: taken.port, host: "127.0.0.1" }, io)).toBe(1);
		expect(lines[0]).toBe(`error [port-in-use]: Port ${taken.port} on 127.0.0.1 is already in use.`);
	});
});

/** Reads a child's output until a whole line starting with prefix arrives, or the stream ends. */
async function readUntil(stream: ReadableStream<Uint8Array>, prefix: string): Promise<string> {
	const reader = stream.getReader();
	const decoder = new TextDecoder();
	let text = "";
	try {
		while (
			!text
				.split("\n")
				.slice(0, -1)
				.some((line) => line.startsWith(prefix))
		) {
			const { value, done } = await reader.read();
			if (done) break;
			text += decoder.decode(value, { stream: true });
		}
	} finally {
		reader.releaseLock();
	}
	return text;
}

describe("the CLI as a child process", () => {
	test("starts, prints where it is without the secret, answers /user, and exits on SIGTERM", async () => {
		const child = Bun.spawn(["bun", CLI, "--fixture", fixturePath, "--port", "0"], {
			stdout: "pipe",
			stderr: "pipe",
		});
		children.push(child);
		const printed = await readUntil(child.stdout, "# GITHUB_CLIENT_SECRET");
		const env = Object.fromEntries(
			printed
				.split("\n")
				.filter((l) => /^[A-Z_]+=/.test(l))
				.map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
		);
		expect(env.AUTH_MODE).toBe("github");
		expect(env.GITHUB_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
		expect(env.GITHUB_API_URL).toBe(`${env.GITHUB_URL}/api/v3`);
		expect(env.GITHUB_CLIENT_ID).toBe(CLIENT_ID);
		expect(env.GITHUB_CLIENT_SECRET).toBeUndefined();
		expect(printed).toContain(
			`# GITHUB_CLIENT_SECRET: see the fixture (apps[0].clientSecret in ${fixturePath})`,
		);

		const res = await fetch(`${env.GITHUB_API_URL}/user`, { headers: { authorization: `token ${PAT}` } });
		expect(res.status).toBe(200);
		expect(((await res.json()) as { login: string }).login).toBe("octocat");

		child.kill("SIGTERM");
		expect(await child.exited).toBe(0);
		const rest = printed + (await readUntil(child.stdout, "\0never"));
		const stderr = await new Response(child.stderr).text();
		expect(stderr).toContain("GitHub emulator stopped (SIGTERM).");
		expect(rest + stderr).not.toContain(CLIENT_SECRET);
	});

	test("an invalid fixture exits 2 naming the problem", async () => {
		const bad = join(dir, "bad.json");
		writeFileSync(bad, JSON.stringify({ apps: [], users: [] }));
		const child = Bun.spawn(["bun", CLI, "--fixture", bad, "--port", "0"], {
			stdout: "pipe",
			stderr: "pipe",
		});
		children.push(child);
		expect(await child.exited).toBe(2);
		const stderr = await new Response(child.stderr).text();
		expect(stderr).toContain("error [fixture-invalid]:");
		expect(stderr).toContain("  apps: ");
		expect(await new Response(child.stdout).text()).toBe("");
	});
});
