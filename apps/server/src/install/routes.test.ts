import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { URL_CASES } from "../../../../installers/testing/url-rule";
import { ConfigError, DEFAULT_CLI_DOWNLOAD_URL, loadConfig } from "../config";
import { startTestServer, type TestServer } from "../testing/server";
import { readInstaller, withDownloadUrl } from "./scripts";

const open: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
	await Promise.all(open.splice(0).map((s) => s.close()));
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
async function serve(env: Record<string, string> = {}): Promise<TestServer> {
	const server = await startTestServer({ env });
	open.push(server);
	return server;
}

/** The script's text with its one base line removed: what must not change when the base does. */
function withoutBaseLine(script: string): string {
	return script.replace(/^(default_download_url=|\$ChopinDefaultDownloadUrl = ).*$/m, "");
}

describe("GET /install.sh and /install.ps1", () => {
	test("serve the installers as plain text; by default pointing at the project's GitHub releases", async () => {
		const server = await serve();
		for (const name of ["install.sh", "install.ps1"] as const) {
			const res = await fetch(`${server.url}/${name}`);
			expect(res.status).toBe(200);
			expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
			expect(res.headers.get("cache-control")).toBe("no-cache");
			// The default base is the one the files carry, so they are served byte for byte.
			expect(await res.text()).toBe(readInstaller(name));
		}
		expect(readInstaller("install.sh")).toContain(`default_download_url='${DEFAULT_CLI_DOWNLOAD_URL}'`);
		expect(readInstaller("install.ps1")).toContain(
			`$ChopinDefaultDownloadUrl = '${DEFAULT_CLI_DOWNLOAD_URL}'`,
		);
		const head = await fetch(`${server.url}/install.sh`, { method: "HEAD" });
		expect([head.status, await head.text()]).toEqual([200, ""]);
		expect((await fetch(`${server.url}/install.sh`, { method: "POST" })).status).toBe(405);
	});

	test("with CLI_DOWNLOAD_URL, that base is substituted and nothing else changes", async () => {
		const base = "https://downloads.example/chopin/v{version}";
		const server = await serve({ CLI_DOWNLOAD_URL: `${base}/` });
		const sh = await (await fetch(`${server.url}/install.sh`)).text();
		expect(sh).toContain(`\ndefault_download_url='${base}'\n`);
		expect(sh).not.toContain(DEFAULT_CLI_DOWNLOAD_URL);
		expect(withoutBaseLine(sh)).toBe(withoutBaseLine(readInstaller("install.sh")));
		const ps1 = await (await fetch(`${server.url}/install.ps1`)).text();
		expect(ps1).toContain(`\n$ChopinDefaultDownloadUrl = '${base}'\n`);
		expect(withoutBaseLine(ps1)).toBe(withoutBaseLine(readInstaller("install.ps1")));
	});

	test("`curl <server>/install.sh | sh` downloads from the server's base with no other setting", async () => {
		const root = mkdtempSync(join(tmpdir(), "chopin-install-route-"));
		dirs.push(root);
		// A stand-in chopin for this machine: the route is under test here, not the binary.
		const os = process.platform === "darwin" ? "darwin" : "linux";
		const arch = process.arch === "arm64" ? "arm64" : "x64";
		const asset = `chopin-${os}-${arch}`;
		const binary = "#!/bin/sh\necho 7.7.7\n";
		const sums = `${createHash("sha256").update(binary).digest("hex")}  ${asset}\n`;
		const requests: string[] = [];
		await using host = Bun.serve({
			hostname: "127.0.0.1",
			port: 0,
			fetch(req) {
				const path = new URL(req.url).pathname;
				requests.push(path);
				if (path === `/dl/7.7.7/${asset}`) return new Response(binary);
				if (path === "/dl/7.7.7/SHA256SUMS") return new Response(sums);
				return new Response("not found", { status: 404 });
			},
		});
		const server = await serve({ CLI_DOWNLOAD_URL: `http://127.0.0.1:${host.port}/dl/{version}` });
		const script = await (await fetch(`${server.url}/install.sh`)).text();
		const child = Bun.spawn(["/bin/sh"], {
			stdin: new TextEncoder().encode(script),
			stdout: "pipe",
			stderr: "pipe",
			env: { PATH: process.env.PATH ?? "", HOME: root, CHOPIN_VERSION: "7.7.7" },
		});
		const stderr = await new Response(child.stderr).text();
		expect(await child.exited).toBe(0);
		expect(stderr).toContain(`chopin 7.7.7 installed at ${root}/.chopin/bin/chopin`);
		expect(requests).toEqual([`/dl/7.7.7/${asset}`, "/dl/7.7.7/SHA256SUMS"]);
		expect(statSync(join(root, ".chopin", "bin", "chopin")).mode & 0o777).toBe(0o755);
		expect(readFileSync(join(root, ".chopin", "bin", "chopin"), "utf8")).toBe(binary);
	});
});

describe("withDownloadUrl", () => {
	test("writes the value safely for each language", () => {
		const sh = withDownloadUrl("install.sh", "a\ndefault_download_url='x'\nb\n", "https://h/it's/$HOME");
		expect(sh).toBe("a\ndefault_download_url='https://h/it'\\''s/$HOME'\nb\n");
		const ps1 = withDownloadUrl("install.ps1", "$ChopinDefaultDownloadUrl = 'x'\n", "https://h/it's/$x");
		expect(ps1).toBe("$ChopinDefaultDownloadUrl = 'https://h/it''s/$x'\n");
	});

	test("refuses a script without exactly one base line", () => {
		expect(() => withDownloadUrl("install.sh", "echo hi\n", "https://h")).toThrow(
			"installers/install.sh must have exactly one download base line (found 0)",
		);
		expect(() =>
			withDownloadUrl("install.sh", "default_download_url='a'\ndefault_download_url='b'\n", "https://h"),
		).toThrow("(found 2)");
	});
});

describe("CLI_DOWNLOAD_URL", () => {
	const config = (value?: string) =>
		loadConfig(value === undefined ? {} : { CLI_DOWNLOAD_URL: value }, { cwd: "/" });

	test("defaults to the project's GitHub releases, keeps {version} as written and drops trailing slashes", () => {
		expect(config().cliDownloadUrl).toBe("https://github.com/chopin-app/chopin/releases/download/v{version}");
		expect(config("").cliDownloadUrl).toBe(DEFAULT_CLI_DOWNLOAD_URL);
		expect(config("https://mirror.example/chopin/{version}//").cliDownloadUrl).toBe(
			"https://mirror.example/chopin/{version}",
		);
		expect(config("http://127.0.0.1:8080/v{version}").cliDownloadUrl).toBe(
			"http://127.0.0.1:8080/v{version}",
		);
	});

	test("refuses what the installers could not use", () => {
		for (const [value, message] of [
			["ftp://mirror.example/x", "CLI_DOWNLOAD_URL must be an http(s) URL"],
			["not a url", "CLI_DOWNLOAD_URL must be an http(s) URL"],
			["https://user:pw@mirror.example/x", "CLI_DOWNLOAD_URL must be an http(s) URL"],
			["http://mirror.example/v{version}", "CLI_DOWNLOAD_URL must be https (plain http only on loopback)"],
			["https://mirror.example/it's", "CLI_DOWNLOAD_URL must be a plain URL"],
			["https://mirror.example/$(id)", "CLI_DOWNLOAD_URL must be a plain URL"],
			["https://mirror.example/x?v={version}", "CLI_DOWNLOAD_URL must be a plain URL"],
		] as const) {
			let error: unknown;
			try {
				config(value);
			} catch (thrown) {
				error = thrown;
			}
			expect(error).toBeInstanceOf(ConfigError);
			expect({ value, message: (error as Error).message }).toMatchObject({
				value,
				message: expect.stringContaining(message),
			});
		}
	});

	test("accepts a URL only where the installers would download from it: their own table of URLs", () => {
		const accepted = (value: string) => {
			try {
				config(value);
				return true;
			} catch (error) {
				if (error instanceof ConfigError) return false;
				throw error;
			}
		};
		// What a normalising parser would take for 127.0.0.1, and the installers refuse.
		for (const value of [
			"http://127.1/x",
			"http://0x7f.0.0.1/x",
			"http://127.0.0.01/x",
			"http://2130706433/x",
		])
			expect({ value, accepted: accepted(value) }).toEqual({ value, accepted: false });
		// (Environment values are trimmed and an empty one is unset: the table's blank and padded cases are another matter.)
		for (const [value, installers] of URL_CASES.filter(([url]) => url !== "" && url === url.trim())) {
			// The server refuses more (a query, a fragment, quotes), never less.
			if (accepted(value)) expect({ value, installers }).toEqual({ value, installers: true });
		}
		expect(accepted("http://LocalHost:8080/x")).toBe(true);
		expect(accepted("http://127.0.0.1:8765")).toBe(true);
		expect(accepted("http://[::1]:8080")).toBe(true);
	});
});
