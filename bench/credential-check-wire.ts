/**
 * The over-the-wire half of bench/credential-check.ts: the real server (`bun apps/server/src/main.ts`) on the
 * seeded store, 100 concurrent clients in two processes (bench/credential-check-clients.ts), and per kind of
 * request p50/p99 beside a baseline measured in the same run: GET /api/connector/ping (checks nothing) for
 * the HTTP requests, a bare Bun WebSocket server in its own process for the upgrade.
 */
import { join } from "node:path";
import { freePort, startServerProcess } from "../test/reliability/support/server-process";
import type { Seeded } from "./credential-seed";

const CLIENT_PROCESSES = 2;
const CLIENTS = 100;
const SCRIPT = join(import.meta.dir, "credential-check-clients.ts");

type Kind = "ping" | "machine-http" | "planner-http" | "planner-ws" | "bare-ws";

export interface Figures {
	p50: number;
	p99: number;
	max: number;
	perSecond: number;
}

function percentiles(samples: number[], wallMs: number): Figures {
	const sorted = [...samples].sort((a, b) => a - b);
	const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
	return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1)!, perSecond: (samples.length / wallMs) * 1000 };
}

async function runJob(
	kind: Kind,
	url: string,
	requests: number,
	tokens: string[][],
	warmup = Math.ceil(requests / 10),
): Promise<Figures> {
	const perProcess = CLIENTS / CLIENT_PROCESSES;
	const start = performance.now();
	const outputs = await Promise.all(
		Array.from({ length: CLIENT_PROCESSES }, async (_, p) => {
			const child = Bun.spawn([process.execPath, SCRIPT], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
			child.stdin.write(
				JSON.stringify({
					kind,
					url,
					clients: perProcess,
					requests,
					warmup,
					tokens: tokens.slice(p * perProcess, (p + 1) * perProcess),
				}),
			);
			await child.stdin.end();
			const [out, err, code] = await Promise.all([
				new Response(child.stdout).text(),
				new Response(child.stderr).text(),
				child.exited,
			]);
			if (code !== 0)
				throw new Error(`${kind} clients exited ${code}: ${err.trim().split("\n").slice(-5).join(" / ")}`);
			return (JSON.parse(out.trim().split("\n").at(-1)!) as { samples: number[] }).samples;
		}),
	);
	return percentiles(outputs.flat(), performance.now() - start);
}

function line(name: string, f: Figures, base?: Figures): string {
	const over = base
		? `   over baseline: p50 +${(f.p50 - base.p50).toFixed(2)} ms, p99 +${(f.p99 - base.p99).toFixed(2)} ms`
		: "";
	return `  ${name.padEnd(40)} p50 ${f.p50.toFixed(2)} ms   p99 ${f.p99.toFixed(2)} ms   max ${f.max.toFixed(1)} ms   ${Math.round(f.perSecond)}/s${over}`;
}

/** Starts the server on the seeded store, runs every kind of request, prints the figures, stops it all. */
export async function overTheWire(options: {
	dataDir: string;
	databaseUrl?: string;
	seeded: Seeded;
	httpRequests: number;
	wsRequests: number;
}): Promise<void> {
	const { seeded } = options;
	const port = await freePort();
	const server = await startServerProcess({
		dataDir: options.dataDir,
		port,
		env: {
			AUTH_MODE: "local",
			DEMO: "off",
			LOCAL_ACCOUNTS: JSON.stringify({
				users: [{ login: "bench" }],
				repositories: { "bench/repo": { bench: "admin" } },
			}),
			LOCAL_PLANNER_CREDENTIALS: "on",
			AGENT: "on",
			HARNESS: "remote",
			LOG_LEVEL: "warn",
			...(options.databaseUrl && { DATABASE_URL: options.databaseUrl }),
		},
	});
	const bare = Bun.spawn([process.execPath, SCRIPT, "--bare"], { stdout: "pipe", stderr: "inherit" });
	try {
		const reader = bare.stdout.getReader();
		const { value } = await reader.read();
		reader.releaseLock();
		const bareUrl = `http://127.0.0.1:${new TextDecoder().decode(value).trim()}`;
		// Each client cycles over its own 100 machines' credentials, or over its own document's 100 Planner credentials.
		const machineTokens = Array.from({ length: CLIENTS }, (_, c) =>
			seeded.machineTokens.slice(c * 100, (c + 1) * 100),
		);
		const plannerTokens = seeded.plannerByDocument.slice(0, CLIENTS);
		const none: string[][] = [];
		console.log(
			`  over the wire: ${CLIENTS} concurrent clients in ${CLIENT_PROCESSES} processes, server ${server.url}`,
		);
		const ping = await runJob("ping", server.url, options.httpRequests, none);
		console.log(line("HTTP baseline (GET /api/connector/ping)", ping));
		// Every machine's first call also writes its last_contact_at and loads its authorization: timed apart.
		const first = await runJob("machine-http", server.url, 100, machineTokens, 0);
		console.log(line("HTTP machine credential (first contact)", first, ping));
		const machine = await runJob("machine-http", server.url, options.httpRequests, machineTokens);
		console.log(line("HTTP machine credential (valid)", machine, ping));
		const planner = await runJob("planner-http", server.url, options.httpRequests, plannerTokens);
		console.log(line("HTTP Planner credential (valid)", planner, ping));
		const ping2 = await runJob("ping", server.url, options.httpRequests, none);
		console.log(line("HTTP baseline again", ping2));
		const bareWs = await runJob("bare-ws", bareUrl, options.wsRequests, none);
		console.log(line("WS baseline (bare Bun upgrade)", bareWs));
		const agentWs = await runJob("planner-ws", server.url, options.wsRequests, plannerTokens);
		console.log(line("WS /api/v1/agent upgrade (chopin_p_)", agentWs, bareWs));
	} finally {
		bare.kill();
		await bare.exited;
		await server.stop();
	}
}
