// The demo's machine: a checkout of demo/score, `chopin connect` paired through the real pairing flow (this script
// confirms the code as the signed-in demo account, as a person would on the link's page), the example Planner
// backend launched by the machine's daemon, and one @chopin message answered. The daemon stays in the foreground
// with the server until Ctrl-C.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { lines } from "./lines";

export interface DemoMachineOptions {
	/** The repository's root (where apps/ and examples/ are). */
	root: string;
	/** The running server's URL. */
	url: string;
	/** Where the demo keeps its checkout and the machine's state and config. */
	dataDir: string;
	/** Status lines for the person running the demo. */
	say(line: string): void;
	/** The daemon's own output (its log lines and the backend's, redacted). */
	daemonOutput?(line: string): void;
	/** What the daemon is told to run as the Planner backend (default: the example echo backend). */
	plannerCommand?: string[];
}

export interface DemoMachine {
	/** The daemon process (`chopin connect`, which becomes the daemon once paired). */
	readonly daemon: Bun.Subprocess;
	readonly documentId: string;
	/** The Planner's reply to the demo's message. */
	readonly reply: string;
	stop(): Promise<void>;
}

const DEMO = "demo";
const REPOSITORY = "demo/score";
const MESSAGE = "@chopin Hello from the demo machine!";

/** Runs the whole loop; resolves once the Planner's reply to the demo message is complete. */
export async function startDemoMachine(options: DemoMachineOptions): Promise<DemoMachine> {
	const { root, url, dataDir, say } = options;
	const api = await signIn(url);
	const documentId = await demoDocument(api);
	const checkout = await demoCheckout(join(dataDir, "checkout", "score"));
	const command = options.plannerCommand ?? ["bun", join(root, "examples/planner-echo/src/main.ts")];
	const cliEnv = {
		...process.env,
		CHOPIN_STATE_DIR: join(dataDir, "machine", "state"),
		CHOPIN_CONFIG_DIR: join(dataDir, "machine", "config"),
		CHOPIN_PLANNER_COMMAND: JSON.stringify(command),
	};
	const cli = join(root, "apps/cli/src/main.ts");
	await forgetOtherServer(cli, cliEnv, url, say);
	const daemon = Bun.spawn(
		[
			"bun",
			cli,
			"connect",
			checkout,
			"--server",
			url,
			"--label",
			"demo machine",
			"--planner",
			documentId,
			// The demo's backend lives in this repository, outside the sandbox's view; real backends get one.
			"--no-sandbox",
		],
		{
			cwd: checkout,
			env: cliEnv,
			stdin: "ignore",
			stdout: "pipe",
			stderr: "pipe",
			// Its own process group: a terminal's Ctrl-C reaches this script, which stops the daemon with
			// one SIGTERM; a second signal would make the daemon skip its graceful stop of the backend.
			detached: true,
		},
	);
	const stop = async () => {
		daemon.kill("SIGTERM");
		await daemon.exited;
	};
	try {
		void lines(daemon.stdout, (line) => options.daemonOutput?.(line));
		void watchPairing(daemon.stderr, options.daemonOutput, async (pairing) => {
			say(`Pairing the demo machine: confirming code ${pairing.code} as ${DEMO}...`);
			await api.post(`/api/connector/pairings/${pairing.id}/confirm`, { code: pairing.code, autoRun: false });
		});
		const reply = await Promise.race([
			askPlanner(api, documentId, say),
			daemon.exited.then((code) => {
				throw new Error(`chopin connect exited with status ${code} before the Planner answered`);
			}),
		]);
		return { daemon, documentId, reply, stop };
	} catch (error) {
		await stop();
		throw error;
	}
}

/**
 * The demo machine was paired with the demo server at another address (another PORT): `chopin
 * disconnect` first, as its own error says to, so it pairs with this one.
 */
async function forgetOtherServer(
	cli: string,
	env: Record<string, string | undefined>,
	url: string,
	say: (line: string) => void,
): Promise<void> {
	const file = join(env.CHOPIN_CONFIG_DIR!, "machine.json");
	if (!existsSync(file)) return;
	const stored = (JSON.parse(readFileSync(file, "utf8")) as { server?: string }).server;
	if (!stored || stored === new URL(url).origin) return;
	say(`The demo machine was paired with ${stored}: disconnecting it to pair with ${url}.`);
	const proc = Bun.spawn(["bun", cli, "disconnect"], {
		env,
		stdin: "ignore",
		stdout: "ignore",
		stderr: "ignore",
	});
	await proc.exited;
}

interface Api {
	get(path: string): Promise<unknown>;
	post(path: string, body: unknown): Promise<{ status: number; body: unknown }>;
}

/** Signs in as the demo account as the sign-in page does, and returns requests that carry its cookie. */
async function signIn(url: string): Promise<Api> {
	const origin = new URL(url).origin;
	const res = await fetch(new URL("/auth/local/sign-in", url), {
		method: "POST",
		headers: { "content-type": "application/json", origin },
		body: JSON.stringify({ login: DEMO }),
	});
	if (!res.ok) throw new Error(`signing in as ${DEMO} answered ${res.status}`);
	const cookie = res.headers
		.getSetCookie()
		.map((c) => c.split(";")[0])
		.join("; ");
	const headers = { cookie, origin, "content-type": "application/json" };
	return {
		async get(path) {
			const answer = await fetch(new URL(path, url), { headers });
			if (!answer.ok) throw new Error(`GET ${path} answered ${answer.status}`);
			return answer.json();
		},
		async post(path, body) {
			const answer = await fetch(new URL(path, url), { method: "POST", headers, body: JSON.stringify(body) });
			return { status: answer.status, body: await answer.json().catch(() => null) };
		},
	};
}

async function demoDocument(api: Api): Promise<string> {
	const listed = (await api.get(`/api/documents?repository=${encodeURIComponent(REPOSITORY)}`)) as {
		documents: { id: string; title: string }[];
	};
	const document = listed.documents.find((d) => d.title === "Welcome to Chopin") ?? listed.documents[0];
	if (!document) throw new Error(`no document in ${REPOSITORY}: the demo data was not made (DEMO=on)`);
	return document.id;
}

/** A git checkout whose origin names demo/score (nothing is ever fetched from it). */
async function demoCheckout(path: string): Promise<string> {
	if (existsSync(join(path, ".git"))) return path;
	mkdirSync(path, { recursive: true });
	const git = async (...args: string[]) => {
		const proc = Bun.spawn(["git", ...args], { cwd: path, stdout: "ignore", stderr: "pipe" });
		if ((await proc.exited) !== 0)
			throw new Error(`git ${args[0]} failed: ${await new Response(proc.stderr).text()}`);
	};
	await git("init", "--quiet", "--initial-branch=main");
	await Bun.write(join(path, "README.md"), "# score\n\nThe demo machine's checkout of demo/score.\n");
	await git("add", "README.md");
	await git(
		"-c",
		"user.name=Chopin demo",
		"-c",
		"user.email=demo@chopin.invalid",
		"commit",
		"--quiet",
		"-m",
		"Demo",
	);
	await git("remote", "add", "origin", `https://github.com/${REPOSITORY}.git`);
	return path;
}

/** Reads connect's status lines; when it prints the pairing link and code, confirms them. */
async function watchPairing(
	stream: ReadableStream<Uint8Array>,
	output: ((line: string) => void) | undefined,
	confirm: (pairing: { id: string; code: string }) => Promise<void>,
): Promise<void> {
	await lines(stream, (line) => {
		output?.(line);
		const match = /^Open (\S+) and check the code (\S+)\.$/.exec(line);
		const id = match && /\/pair\/([^/?#]+)/.exec(match[1]!)?.[1];
		if (match && id) void confirm({ id, code: match[2]! });
	});
}

/**
 * Posts the demo message; while the machine is still starting its backend the server answers
 * "Still connecting…", so it tries again for a while. Resolves with the Planner's finished reply.
 */
async function askPlanner(api: Api, documentId: string, say: (line: string) => void): Promise<string> {
	const deadline = Date.now() + 120_000;
	for (;;) {
		const sent = await api.post(`/api/documents/${documentId}/messages`, { body: MESSAGE });
		if (sent.status === 201) break;
		const refusal = sent.body as { message?: string } | null;
		if (Date.now() > deadline)
			throw new Error(`the Planner did not attach: ${refusal?.message ?? sent.status}`);
		await Bun.sleep(1_000);
	}
	say(`Sent "${MESSAGE}" to the demo document's Chat.`);
	for (;;) {
		const { messages } = (await api.get(`/api/documents/${documentId}/messages`)) as {
			messages: { role: string; body: string; status: string; seq: number }[];
		};
		const asked = messages.findLast((m) => m.role === "person" && m.body === MESSAGE);
		const reply =
			asked && messages.find((m) => m.role === "planner" && m.seq > asked.seq && m.status !== "streaming");
		if (reply) return reply.body;
		if (Date.now() > deadline) throw new Error("the Planner did not answer the demo message in time");
		await Bun.sleep(250);
	}
}
