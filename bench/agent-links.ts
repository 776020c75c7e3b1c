/**
 * What an idle attached link costs the server: N agent connections (one per document, the protocol's rule; default
 * 10,000) attached from a separate process that answers the server's pings, spread over A accounts (default 100,
 * from LOCAL_ACCOUNTS, each with its own bearer, its own browser sign-in and its own repository), then the server's
 * heap and RSS growth per link while pings run every second. Target: under 20 KiB per link. Not a test: it prints
 * its figures.
 *
 *   bun bench/agent-links.ts [links = documents, default 10000] [accounts, default 100]
 */
import { join } from "node:path";
import { AgentFixture } from "../apps/server/src/testing/agent-fixture";

const links = Number(process.argv[2] ?? 10_000);
const accountCount = Number(process.argv[3] ?? 100);
// Account i is admin of its own repository and owns the documents i, i + A, i + 2A, ...
const accounts = Array.from({ length: accountCount }, (_, i) => ({
	login: `bench-${String(i).padStart(3, "0")}`,
	token: `bench-${String(i).padStart(3, "0")}-dev-token-0123456789`,
	repository: `bench/repo-${String(i).padStart(3, "0")}`,
}));
const f = await AgentFixture.start({
	env: {
		AGENT_CONNECTION_PING_MS: "1000",
		AGENT_CONNECTION_TIMEOUT_MS: "10000",
		AGENT_CONNECTION_MAX_SILENCE_MS: "60000",
		LOCAL_ACCOUNTS: JSON.stringify({
			users: accounts.map(({ login, token }) => ({ login, token })),
			repositories: Object.fromEntries(accounts.map((a) => [a.repository, { [a.login]: "admin" }])),
		}),
	},
});
// The fixture's ManualClock would stop pings: this bench wants the real ones, so it drives time itself.
const tick = setInterval(() => void f.clock.advance(100), 100);
let child: Bun.Subprocess<"pipe", "pipe", "inherit"> | undefined;
try {
	const planned: { token: string; document: string }[] = [];
	for (let i = 0; i < links; i++) {
		const owner = accounts[i % accounts.length]!;
		const document = await f.createDocument({
			title: `Plan ${i}`,
			repository: owner.repository,
			by: owner.login,
		});
		planned.push({ token: owner.token, document: document.id });
	}
	// An account's link attaches only while its browser sign-in lives on this server. Sign-ins from one address
	// are rate limited (10, then one per 6 s): the fixture's clock is moved on past the refill between tens.
	for (const [i, { login }] of accounts.entries()) {
		if (i > 0 && i % 10 === 0) await f.clock.advance(60_000);
		await f.signIn(login);
	}

	const memory = () => {
		Bun.gc(true);
		const { rss, heapUsed } = process.memoryUsage();
		return { rss, heapUsed };
	};
	const before = memory();
	const started = performance.now();
	child = Bun.spawn(["bun", join(import.meta.dir, "agent-links-clients.ts")], {
		stdin: "pipe",
		stdout: "pipe",
		stderr: "inherit",
	});
	child.stdin.write(JSON.stringify({ url: f.server.url, links: planned }));
	await child.stdin.end();
	const reader = child.stdout.getReader();
	let out = "";
	while (!out.includes("ready")) {
		const { value, done } = await reader.read();
		if (done) throw new Error(`the clients exited: ${out}`);
		out += new TextDecoder().decode(value);
	}
	const attachSeconds = (performance.now() - started) / 1000;
	// Pings every second (on the clock driven above) for longer than the 10-second timeout: a link whose
	// pongs did not count would be dropped meanwhile.
	await Bun.sleep(12_000);
	const attached = f.ctx.planner.linkStats().filter((l) => l.state === "attached").length;
	const after = memory();
	const perLink = (bytes: number) => `${(bytes / attached / 1024).toFixed(1)} KiB`;
	console.log(
		`${links.toLocaleString("en-US")} links over ${accounts.length} accounts attached in ${attachSeconds.toFixed(1)} s; ${attached.toLocaleString("en-US")} still attached after 12 s of 1-second pings (10-second timeout)`,
	);
	console.log(
		`heap +${((after.heapUsed - before.heapUsed) / 2 ** 20).toFixed(1)} MiB = ${perLink(after.heapUsed - before.heapUsed)} per link`,
	);
	console.log(
		`rss  +${((after.rss - before.rss) / 2 ** 20).toFixed(1)} MiB = ${perLink(after.rss - before.rss)} per link (sockets, Bun's buffers and the heap)`,
	);
	console.log(`load average: ${(await Bun.file("/proc/loadavg").text()).trim()}`);
} finally {
	clearInterval(tick);
	child?.kill();
	await f.close();
}
