import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "@chopin/agent-link/clock";
import { type GitHubEmulator, startGitHubEmulator } from "../../../server/src/testing/github-emulator";
import { testFixture } from "../../../server/src/testing/github-emulator-test-kit";
import { pageRequest } from "../../../server/src/testing/machines";
import { startTestServer, type TestServer } from "../../../server/src/testing/server";
import { signInWithGitHub } from "../../../server/src/testing/sign-in";
import { credentialSchema } from "../machine/credential";
import { machineConfigSchema } from "../machine/machine-config";
import { upgradeCommand } from "../program/version";
import { eventually, killCliProcesses, readLog, runCliProcess, spawnCli } from "../testing/cli-process";
import {
	type CliHome,
	type MachineServer,
	makeCliHome,
	pairHome,
	startMachineServer,
} from "../testing/machine-server";

const servers: MachineServer[] = [];
const homes: CliHome[] = [];
const github: { gh: GitHubEmulator; server: TestServer }[] = [];
afterEach(async () => {
	await killCliProcesses();
	for (const s of servers.splice(0)) await s.server.close();
	for (const g of github.splice(0)) {
		await g.server.close();
		g.gh.verify();
		await g.gh.stop();
	}
	for (const h of homes.splice(0)) rmSync(h.root, { recursive: true, force: true });
});

async function serve(options: Parameters<typeof startMachineServer>[0] = {}): Promise<MachineServer> {
	const machines = await startMachineServer(options);
	servers.push(machines);
	return machines;
}

async function home(): Promise<CliHome> {
	const h = await makeCliHome();
	homes.push(h);
	return h;
}

/** Every file under a directory, with its text. */
function filesUnder(dir: string): { file: string; text: string }[] {
	if (!existsSync(dir)) return [];
	return readdirSync(dir, { recursive: true, withFileTypes: true })
		.filter((entry) => entry.isFile())
		.map((entry) => join(entry.parentPath, entry.name))
		.map((file) => ({ file, text: readFileSync(file, "utf8") }));
}

const PAIRING_LINE = /Open (\S+\/pair\/(prg_\w+)) and check the code ([A-Z0-9]{4}-[A-Z0-9]{4})\./;
const TOKEN_SHAPES = [/chopin_[mpr]_[A-Za-z0-9_-]{20,}/, /\bgh[pousr]_[A-Za-z0-9]{20,}/];

describe("chopin connect: pairing end to end (local mode)", () => {
	test("prints the link and code, the person confirms, and a 0600 credential is stored; nothing secret is shown", async () => {
		const machines = await serve();
		const h = await home();
		const cli = spawnCli(
			["connect", h.checkout, "--server", machines.server.url, "--no-run", "--label", "ana's laptop"],
			h.env,
		);
		const [, link, pairingId, code] = await cli.waitFor(PAIRING_LINE);
		expect(link).toBe(`${machines.target.publicUrl}/pair/${pairingId}`);
		const confirmed = await machines.confirm(pairingId!, code!);
		expect(confirmed.status).toBe(200);
		expect(await cli.exited).toBe(0);

		expect(cli.stdout()).toBe("");
		expect(cli.stderr()).toContain(
			`Paired: this computer is ana's machine "ana's laptop" on ${machines.server.url}.`,
		);
		expect(cli.stderr()).toContain("Start serving with `chopin run`");
		const file = h.paths.credentialFile;
		expect(statSync(file).mode & 0o777).toBe(0o600);
		const credential = credentialSchema.parse(JSON.parse(readFileSync(file, "utf8")));
		expect(credential.server).toBe(machines.server.url);
		const config = machineConfigSchema.parse(JSON.parse(readFileSync(h.paths.machineConfigFile, "utf8")));
		expect(config).toMatchObject({
			server: machines.server.url,
			label: "ana's laptop",
			checkouts: [{ path: h.checkout, repository: "octo/score", origin: "git@github.com:octo/score.git" }],
		});
		expect(statSync(h.paths.machineConfigFile).mode & 0o777).toBe(0o600);

		// The credential works: the server knows the machine as ana's.
		const machine = machines.server.context.machines;
		expect((await machine.list("ana")).map((m) => m.id)).toContain(credential.machineId);

		// Every request named the client.
		const pairingRequests = machines.server.logs.filter(
			(l) => l.msg === "request" && String(l.path).startsWith("/api/connector/pairings"),
		);
		expect(pairingRequests.every((l) => l.status !== 400)).toBe(true);

		// Nothing secret in the output or in any file but credential.json.
		const outputs = [cli.stdout(), cli.stderr()];
		const files = filesUnder(h.paths.stateDir).filter((f) => f.file !== file);
		expect(files.some((f) => f.file.endsWith("chopin.log"))).toBe(true);
		for (const text of [
			...outputs,
			...files.map((f) => f.text),
			...filesUnder(h.paths.configDir).map((f) => f.text),
		]) {
			expect(text).not.toContain(credential.token);
			for (const shape of TOKEN_SHAPES) expect(text).not.toMatch(shape);
		}
		const log = readLog(h.paths.logFile);
		expect(log.some((l) => l.msg === "pairing claimed")).toBe(true);
	}, 30_000);

	test("Ctrl-C while waiting: exit 130, nothing stored", async () => {
		const machines = await serve();
		const h = await home();
		const cli = spawnCli(["connect", h.checkout, "--server", machines.server.url], h.env);
		await cli.waitFor(PAIRING_LINE);
		cli.kill("SIGINT");
		expect(await cli.exited).toBe(130);
		expect(cli.stderr()).toContain("Cancelled: nothing was stored.");
		expect(existsSync(h.paths.credentialFile)).toBe(false);
		expect(existsSync(h.paths.machineConfigFile)).toBe(false);
	}, 30_000);

	test("a pairing nobody confirms expires: pairing-expired, exit 1, nothing stored", async () => {
		const clock = new ManualClock();
		const machines = await serve({ clock });
		const h = await home();
		const cli = spawnCli(["connect", h.checkout, "--server", machines.server.url], h.env);
		await cli.waitFor(PAIRING_LINE);
		await clock.advance(5 * 60_000 + 1);
		expect(await cli.exited).toBe(1);
		expect(cli.stderr()).toContain(
			"error: The pairing expired before anyone confirmed it; nothing was stored.",
		);
		expect(cli.stderr()).toContain("hint: Run `chopin connect` again");
		expect(existsSync(h.paths.credentialFile)).toBe(false);
	}, 30_000);

	test("a server that needs a newer chopin: exit 12 with the exact upgrade command", async () => {
		const machines = await serve({ env: { MIN_CLI_VERSION: "9.0.0" } });
		const h = await home();
		const result = await runCliProcess(["connect", h.checkout, "--server", machines.server.url], h.env);
		expect(result.code).toBe(12);
		const command = upgradeCommand("source", {
			execPath: process.execPath,
			main: join(import.meta.dir, "..", "main.ts"),
			platform: "linux",
			home: h.env.HOME!,
			server: machines.server.url,
			version: "9.0.0",
		});
		expect(result.stderr).toBe(
			`error: ${machines.server.url} needs chopin 9.0.0 or newer, and this is chopin 0.1.0: upgrade with \`${command}\`.\nhint: Run \`${command}\`, then start chopin again.\n`,
		);
		expect(existsSync(h.paths.credentialFile)).toBe(false);
	}, 30_000);

	test("paired with another server: paired-elsewhere, naming chopin disconnect", async () => {
		const machines = await serve();
		const other = await serve();
		const h = await home();
		await pairHome(machines, h);
		const result = await runCliProcess(
			["connect", h.checkout, "--server", other.server.url, "--no-run"],
			h.env,
		);
		expect(result.code).toBe(1);
		expect(result.stderr).toContain(
			`error: This machine is paired with ${machines.server.url}, not ${other.server.url}.`,
		);
		expect(result.stderr).toContain("hint: Run `chopin disconnect` first");
	}, 30_000);

	test("paired already with this server: no new pairing, the checkout is added, idempotently", async () => {
		const machines = await serve();
		const h = await home();
		await pairHome(machines, h);
		const other = await h.makeCheckout("other", "octo/other");
		for (let i = 0; i < 2; i++) {
			const result = await runCliProcess(["connect", other, "--no-run"], h.env);
			expect(result.code).toBe(0);
			expect(result.stderr).toContain(`already paired with ${machines.server.url}: no new pairing is needed`);
		}
		const config = machineConfigSchema.parse(JSON.parse(readFileSync(h.paths.machineConfigFile, "utf8")));
		expect(config.checkouts.map((c) => c.repository)).toEqual(["octo/score", "octo/other"]);
		expect(machines.requests("/api/connector/pairings")).toHaveLength(1); // pairHome's, none by the CLI
	}, 30_000);

	test("--no-run while a daemon serves: it says the running daemon serves the checkout (or not yet), not `chopin run`", async () => {
		const machines = await serve();
		const h = await home();
		await pairHome(machines, h);
		const daemon = spawnCli(["run"], h.env);
		await daemon.waitFor(/Connected to /);
		const served = await runCliProcess(["connect", h.checkout, "--no-run"], h.env);
		expect(served.code).toBe(0);
		expect(served.stderr).toContain(
			`The running chopin daemon (pid ${daemon.pid}) serves ${h.checkout} (octo/score).`,
		);
		expect(served.stderr).not.toContain("chopin run");
		const other = await h.makeCheckout("other", "octo/other");
		const notYet = await runCliProcess(["connect", other, "--no-run"], h.env);
		expect(notYet.code).toBe(0);
		expect(notYet.stderr).toContain(
			`The running chopin daemon (pid ${daemon.pid}) does not serve ${other} yet: run \`chopin connect ${other}\` (without --no-run) to hand it over.`,
		);
		expect(notYet.stderr).not.toContain("Start serving with `chopin run`");
	}, 60_000);

	test("a revoked pairing is replaced by a new one", async () => {
		const machines = await serve();
		const h = await home();
		const { machineId } = await pairHome(machines, h);
		expect((await machines.revoke(machineId)).status).toBe(204);
		const cli = spawnCli(["connect", h.checkout, "--no-run"], h.env);
		const [, , pairingId, code] = await cli.waitFor(PAIRING_LINE);
		expect(cli.stderr()).toContain(
			"no longer accepts the stored credential (machine-revoked): pairing again.",
		);
		await machines.confirm(pairingId!, code!);
		expect(await cli.exited).toBe(0);
		const credential = credentialSchema.parse(JSON.parse(readFileSync(h.paths.credentialFile, "utf8")));
		expect(credential.machineId).not.toBe(machineId);
		await eventually("the new machine", async () =>
			(await machines.server.context.machines.list("ana")).some((m) => m.id === credential.machineId),
		);
	}, 30_000);
});

describe("chopin connect: pairing in GitHub mode, through the emulator", () => {
	test("the person confirms, the browser grants the machine its own authorization, and the CLI claims it", async () => {
		const PUBLIC_URL = "http://chopin.test";
		const fixture = testFixture();
		fixture.apps[0]!.redirectUri = PUBLIC_URL;
		const gh = await startGitHubEmulator({ fixture });
		const server = await startTestServer({ env: { PUBLIC_URL, ...gh.env() } });
		github.push({ gh, server });
		const target = { fetch: (req: Request) => server.fetch(req), publicUrl: PUBLIC_URL };
		const h = await home();
		const checkout = await h.makeCheckout("team-score", "score-team/score");

		const cli = spawnCli(["connect", checkout, "--server", server.url, "--no-run"], h.env);
		const [, link, pairingId, code] = await cli.waitFor(PAIRING_LINE);
		expect(link).toBe(`${PUBLIC_URL}/pair/${pairingId}`);
		const { jar } = await signInWithGitHub(target, "hubot");
		const confirmed = await pageRequest(target, jar, "POST", `/api/connector/pairings/${pairingId}/confirm`, {
			code,
			autoRun: false,
		});
		const answer = (await confirmed.json()) as { status: string; location: string };
		expect(answer.status).toBe("authorize");
		const location = new URL(answer.location, PUBLIC_URL);
		const grant = await signInWithGitHub(target, "hubot", {
			jar,
			intent: location.searchParams.get("intent")!,
			next: location.searchParams.get("next")!,
		});
		expect(grant.callback.status).toBe(302);
		expect(await cli.exited).toBe(0);
		expect(cli.stderr()).toContain(`Paired: this computer is hubot's machine`);
		const credential = credentialSchema.parse(JSON.parse(readFileSync(h.paths.credentialFile, "utf8")));
		expect(statSync(h.paths.credentialFile).mode & 0o777).toBe(0o600);
		const row = await server.context.store.one(
			server.context.store
				.sql`SELECT kind, login FROM machine_authorizations WHERE machine_id = ${credential.machineId}`,
		);
		expect(row).toMatchObject({ kind: "github", login: "hubot" });
		for (const text of [cli.stdout(), cli.stderr(), readFileSync(h.paths.logFile, "utf8")]) {
			expect(text).not.toContain(credential.token);
			for (const shape of TOKEN_SHAPES) expect(text).not.toMatch(shape);
		}
	}, 30_000);
});

describe("chopin connect: a pairing waits out 429s and 5xx, and nobody else's wrong guesses end it", () => {
	test("another client on the same address sends wrong secrets while connect polls: connect still pairs", async () => {
		const machines = await serve();
		const h = await home();
		const cli = spawnCli(["connect", h.checkout, "--server", machines.server.url, "--no-run"], h.env);
		const [, , pairingId, code] = await cli.waitFor(PAIRING_LINE);
		// Eleven wrong secrets from this address (loopback, as the CLI's): the last is refused 429.
		const statuses: number[] = [];
		for (let i = 0; i < 11; i++) {
			const res = await fetch(`${machines.server.url}/api/connector/pairings/${pairingId}/claim`, {
				method: "POST",
				headers: { "content-type": "application/json" },
				body: JSON.stringify({ secret: `wrong-${i}` }),
			});
			statuses.push(res.status);
		}
		expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
		expect(statuses[10]).toBe(429);
		// connect has polled on meanwhile (the server logs its claims), and none of its polls was refused.
		const polls = () =>
			machines.server.logs.filter(
				(l) => l.msg === "request" && l.path === `/api/connector/pairings/${pairingId}/claim`,
			);
		const before = polls().length;
		await eventually("connect's next poll", () => polls().length > before + 1 || undefined);
		expect((await machines.confirm(pairingId!, code!)).status).toBe(200);
		expect(await cli.exited).toBe(0);
		expect(cli.stderr()).toContain("Paired:");
		expect(existsSync(h.paths.credentialFile)).toBe(true);
	}, 60_000);

	test("429 with Retry-After and a 503 in front of the server: connect waits as told and pairs", async () => {
		const machines = await serve();
		const h = await home();
		const refused: number[] = [];
		// A small front that refuses the first claims (as a busy proxy or server would), then passes everything on.
		const front = Bun.serve({
			port: 0,
			hostname: "127.0.0.1",
			async fetch(req) {
				const url = new URL(req.url);
				if (url.pathname.endsWith("/claim") && refused.length < 4) {
					const status = refused.length === 2 ? 503 : 429;
					refused.push(status);
					// The first asks for 3 s (more than the 2 s poll), the rest for 1 s (less).
					const seconds = refused.length === 1 ? 3 : 1;
					const body =
						status === 429
							? {
									code: "rate-limited",
									message: "Too many pairing attempts from here.",
									hint: `Wait ${seconds} seconds and try again.`,
									retryAfter: seconds,
								}
							: { code: "unavailable", message: "Busy." };
					return Response.json(body, { status, headers: { "retry-after": String(seconds) } });
				}
				const target = new URL(url.pathname + url.search, machines.server.url);
				return fetch(target, {
					method: req.method,
					headers: req.headers,
					body: req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer(),
				});
			},
		});
		try {
			const server = `http://127.0.0.1:${front.port}`;
			const cli = spawnCli(["connect", h.checkout, "--server", server, "--no-run"], h.env);
			const [, , pairingId, code] = await cli.waitFor(PAIRING_LINE);
			await eventually("four refused polls", () => refused.length >= 4 || undefined);
			expect(refused).toEqual([429, 429, 503, 429]);
			expect((await machines.confirm(pairingId!, code!)).status).toBe(200);
			expect(await cli.exited).toBe(0);
			expect(cli.stderr()).toContain("The server asked to wait 3 s.");
			const log = readLog(h.paths.logFile);
			const waits = log.filter((l) => l.msg === "pairing poll failed; polling on").map((l) => l.waitMs);
			// Retry-After wins when it is longer than the poll interval; the poll interval otherwise.
			expect(waits).toEqual([3_000, 2_000, 2_000, 2_000]);
		} finally {
			await front.stop(true);
		}
	}, 60_000);
});

describe("chopin connect: secrets given to it never stay in the daemon's command line", () => {
	test("the daemon connect becomes holds no --env value in /proc/<pid>/cmdline; --env-file values reach machine.json", async () => {
		if (process.platform !== "linux") return;
		const machines = await serve();
		const h = await home();
		await pairHome(machines, h);
		const envFile = join(h.root, "planner.env");
		writeFileSync(envFile, "# the backend's keys\nexport FROM_FILE='file-secret-value-77'\n\nOTHER=x\n", {
			mode: 0o600,
		});
		const cli = spawnCli(
			[
				"connect",
				h.checkout,
				"--planner-command",
				"my-planner --flag",
				"--env",
				"API_KEY=argv-secret-value-99",
				"--env-file",
				envFile,
			],
			h.env,
		);
		await cli.waitFor(/Connected to /);
		const cmdline = readFileSync(`/proc/${cli.pid}/cmdline`, "utf8");
		expect(cmdline).not.toContain("argv-secret-value-99");
		expect(cmdline).not.toContain("API_KEY");
		expect(cmdline.split("\0")).toContain("run");
		const config = machineConfigSchema.parse(JSON.parse(readFileSync(h.paths.machineConfigFile, "utf8")));
		expect(config.planner?.env).toEqual({
			API_KEY: "argv-secret-value-99",
			FROM_FILE: "file-secret-value-77",
			OTHER: "x",
		});
		// The one-character value is said to be unmaskable, by name, never by value.
		expect(cli.stderr()).toContain("warning: OTHER's value is shorter than 4 characters");
		cli.kill("SIGINT");
		expect(await cli.exited).toBe(0);
		for (const text of [cli.stdout(), cli.stderr(), readFileSafe(h.paths.logFile)]) {
			expect(text).not.toContain("argv-secret-value-99");
			expect(text).not.toContain("file-secret-value-77");
		}
	}, 60_000);

	test("an --env-file that cannot be read: env-file-unreadable, exit 2, nothing written", async () => {
		const h = await home();
		const result = await runCliProcess(
			["connect", h.checkout, "--server", "http://127.0.0.1:9", "--env-file", join(h.root, "missing.env")],
			h.env,
		);
		expect(result.code).toBe(2);
		expect(result.stderr).toContain(`error: --env-file ${join(h.root, "missing.env")} cannot be read`);
		expect(existsSync(h.paths.machineConfigFile)).toBe(false);
	}, 30_000);
});

function readFileSafe(file: string): string {
	return existsSync(file) ? readFileSync(file, "utf8") : "";
}
