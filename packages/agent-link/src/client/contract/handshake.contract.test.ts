/**
 * Contract: the handshake, in Bun and in Node.js. The upgrade's headers (subprotocol, bearer,
 * features, no Origin), attach first and nothing before attached, the features granted, and
 * what a link keeps when it closes with or without resumable-sessions.
 */
import { describe, expect, test } from "bun:test";
import { parseFeaturesHeader } from "../../features";
import { CONTRACT_TIMEOUT_MS, DOCUMENT, RUNTIMES, TOKEN, useContract } from "./harness";

for (const runtime of RUNTIMES) {
	describe(`handshake (${runtime})`, () => {
		const contract = useContract(runtime);

		test(
			"opens with the subprotocol, the bearer and the features it asks for, no Origin, and attach first",
			async () => {
				const checkout = { origin: "git@github.com:octo-org/score.git", branch: "plan", head: "abc123" };
				const catalog = { models: { available: [{ id: "gpt-5.1", name: "GPT-5.1" }] } };
				const result = contract.run("connect", {
					features: ["capability-catalog"],
					checkout,
					capabilities: catalog,
				});
				const connection = await contract.server.nextConnection();
				expect(connection.headers["sec-websocket-protocol"]).toBe("chopin.agent.v1");
				expect(connection.headers.authorization).toBe(`Bearer ${TOKEN}`);
				expect(connection.headers.origin).toBeUndefined();
				expect(parseFeaturesHeader(connection.headers["chopin-agent-features"])).toEqual([
					"run-stage-deltas",
					"resumable-sessions",
					"restart-notice",
					"capability-catalog",
				]);
				const attach = await connection.attach(["resumable-sessions", "capability-catalog"]);
				expect(attach).toEqual({ type: "attach", version: 1, document: DOCUMENT, checkout });
				// The first message after attached is the catalog: nothing was sent before attached.
				expect(await connection.expect("capabilities")).toEqual({ type: "capabilities", catalog });
				await connection.expect("detach");
				expect(await result).toEqual({
					attached: {
						document: { id: "doc-1", title: "Plan", repository: "octo-org/score" },
						features: ["resumable-sessions", "capability-catalog"],
					},
					closed: { code: 1000, reason: "detach" },
				});
				expect(contract.server.upgrades.map((upgrade) => upgrade.status)).toEqual([101]);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"a link that drops with resumable-sessions granted settles closed with a resume",
			async () => {
				const result = contract.run("connect", { until: "closed" });
				const connection = await contract.server.nextConnection();
				await connection.attach();
				connection.close(1001, "unresponsive");
				expect(await result).toMatchObject({
					attached: { features: ["run-stage-deltas", "resumable-sessions", "restart-notice"] },
					closed: { code: 1001, reason: "unresponsive", resume: { sessions: [] } },
				});
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"resumable: false asks for neither resumable-sessions nor restart-notice, and a drop keeps nothing",
			async () => {
				const result = contract.run("connect", { resumable: false, until: "closed" });
				const connection = await contract.server.nextConnection();
				expect(connection.headers["chopin-agent-features"]).toBe("run-stage-deltas");
				await connection.attach();
				connection.terminate();
				const { closed } = (await result) as { closed: Record<string, unknown> };
				expect(closed.code).toBe(1006);
				expect(closed.resume).toBeUndefined();
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"attached without features, from a server before them, grants none",
			async () => {
				const result = contract.run("connect", { until: "closed" });
				const connection = await contract.server.nextConnection();
				await connection.expect("attach");
				connection.send({
					type: "attached",
					version: 1,
					document: { id: "doc-1", title: "Plan", repository: "octo-org/score" },
				});
				connection.close(1001, "unresponsive");
				const outcome = (await result) as {
					attached: { features: string[] };
					closed: Record<string, unknown>;
				};
				expect(outcome.attached.features).toEqual([]);
				// Without resumable-sessions granted, the drop keeps nothing.
				expect(outcome.closed).toEqual({ code: 1001, reason: "unresponsive" });
			},
			CONTRACT_TIMEOUT_MS,
		);
	});
}
