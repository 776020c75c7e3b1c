/**
 * What GET /api/v1/agent costs the server beside its credential check, without the queue of 100 clients that
 * bench/credential-check.ts's over-the-wire figures carry: the real router (startTestServer's fetch, no socket),
 * one request at a time, wall and CPU time per request (process.cpuUsage), for the ping baseline
 * (GET /api/connector/ping), the agent route with a chopin_p_ and the subprotocol but no Upgrade (every check an
 * upgrade makes, then 400), and its 426 (no subprotocol: nothing read); then the resolver chain, the Planner
 * credential's check and the admission check alone. SQLite, local accounts. Not a test: it prints.
 *
 *   bun bench/agent-route-cost.ts [requests per figure, default 10000]
 */

import { issuePlannerToken, LOCAL_ENV, pairedLocally } from "../apps/server/src/testing/machines";
import { startTestServer } from "../apps/server/src/testing/server";
import { ManualClock } from "../packages/agent-link/src/clock";
import { SUBPROTOCOL } from "../packages/agent-link/src/protocol";

const N = Number(process.argv[2] ?? 10_000);

const server = await startTestServer({
	clock: new ManualClock(Date.now()),
	store: "sqlite",
	env: { ...LOCAL_ENV, LOCAL_PLANNER_CREDENTIALS: "on", AGENT: "on", HARNESS: "remote" },
});
try {
	const { target, jar, ...paired } = await pairedLocally(server);
	const document = await server.context.domain.documents.create({
		repository: "octo/score",
		title: "Plan",
		createdBy: "ana",
	});
	const token = await issuePlannerToken(target, paired.credential, document.id);

	const perRequest = async (name: string, make: () => Request) => {
		for (let i = 0; i < Math.min(2_000, N); i++) await (await server.fetch(make())).arrayBuffer();
		const start = performance.now();
		const cpu = process.cpuUsage();
		for (let i = 0; i < N; i++) await (await server.fetch(make())).arrayBuffer();
		const used = process.cpuUsage(cpu);
		const wall = performance.now() - start;
		console.log(
			`  ${name.padEnd(44)} ${((wall / N) * 1000).toFixed(1)} us wall   ${((used.user + used.system) / N).toFixed(1)} us CPU`,
		);
	};
	const alone = async (name: string, call: () => Promise<unknown>) => {
		await call();
		const start = performance.now();
		for (let i = 0; i < N; i++) await call();
		console.log(`  ${name.padEnd(44)} ${(((performance.now() - start) / N) * 1000).toFixed(1)} us`);
	};

	const agent = (headers: Record<string, string>) => () =>
		new Request(`${server.url}/api/v1/agent`, { headers: { authorization: `Bearer ${token}`, ...headers } });
	console.log(`per request, through the router (${N} each, two rounds):`);
	for (let round = 0; round < 2; round++) {
		await perRequest(
			"GET /api/connector/ping (baseline)",
			() => new Request(`${server.url}/api/connector/ping`),
		);
		await perRequest(
			"GET /api/v1/agent, chopin_p_, no Upgrade (400)",
			agent({ "sec-websocket-protocol": SUBPROTOCOL }),
		);
		await perRequest("GET /api/v1/agent, no subprotocol (426)", agent({}));
	}
	console.log("alone:");
	const principal = await server.context.planner.resolvers.resolve(token);
	await alone("the resolver chain (resolvers.resolve)", () =>
		server.context.planner.resolvers.resolve(token),
	);
	await alone("the Planner credential's check (verify)", () =>
		server.context.machines.verifyPlannerCredential(token),
	);
	await alone("the admission check (identity.admitted)", () =>
		server.context.identity.admitted(principal.authorization),
	);
} finally {
	await server.close();
}
