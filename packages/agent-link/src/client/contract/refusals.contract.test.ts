/**
 * Contract: refusals, in Bun and in Node.js. An upgrade refused over HTTP surfaces as
 * UpgradeRefused with its status (and the body's code where the runtime can read it); a refused
 * message as Refused with its code, message and retry. The bearer never shows in either.
 */
import { describe, expect, test } from "bun:test";
import { REFUSAL_CODES, REFUSALS, subprotocolRequiredBody } from "../../closing";
import { CONTRACT_TIMEOUT_MS, RUNTIMES, useContract } from "./harness";

const UPGRADES = [
	{ status: 401, body: { code: "unauthorized" }, scripted: false },
	{ status: 403, body: { code: "admission-refused" }, scripted: true },
	{ status: 426, body: subprotocolRequiredBody(), scripted: true },
	{ status: 503, body: { code: "github-unavailable" }, scripted: true },
];

for (const runtime of RUNTIMES) {
	describe(`refusals (${runtime})`, () => {
		const contract = useContract(runtime);

		for (const { status, body, scripted } of UPGRADES) {
			test(
				`HTTP ${status} at the upgrade rejects with UpgradeRefused`,
				async () => {
					if (scripted) contract.server.refuseNext(status, body);
					const { error } = (await contract.run("connect", scripted ? {} : { token: "chopin_p_wrong" })) as {
						error: Record<string, unknown>;
					};
					expect(error).toMatchObject({ name: "UpgradeRefused", status, leaksToken: false });
					// Bun's WebSocket gives the status only; ws also gives the body.
					expect(error.code).toBe(runtime === "node" ? body.code : undefined);
					expect(contract.server.upgrades.map((upgrade) => upgrade.status)).toEqual([status]);
				},
				CONTRACT_TIMEOUT_MS,
			);
		}

		test(
			"a server that cannot be reached rejects with connect-failed",
			async () => {
				const url = contract.server.url;
				contract.server.stop();
				const { error } = (await contract.run("connect", {})) as { error: Record<string, unknown> };
				expect(error).toMatchObject({ name: "LinkError", code: "connect-failed", leaksToken: false });
				expect(String(error.message)).not.toContain(url.replace("http://", ""));
			},
			CONTRACT_TIMEOUT_MS,
		);

		for (const code of REFUSAL_CODES) {
			test(
				`refused ${code} rejects with Refused`,
				async () => {
					const result = contract.run("connect", {});
					const connection = await contract.server.nextConnection();
					await connection.expect("attach");
					const retry = REFUSALS[code].retry;
					const message = `Refused with ${code}.`;
					connection.send({ type: "refused", code, message, ...(retry ? { retry } : {}) });
					connection.close(REFUSALS[code].close, code);
					expect(await result).toEqual({
						error: {
							name: "Refused",
							code,
							retry,
							message,
							hint: expect.any(String),
							leaksToken: false,
						},
					});
				},
				CONTRACT_TIMEOUT_MS,
			);
		}

		test(
			"refused after attached (access-revoked) ends the link with the refusal and nothing to resume",
			async () => {
				const result = contract.run("connect", { until: "closed" });
				const connection = await contract.server.nextConnection();
				await connection.attach();
				const message = "A repository writer reset this document's connection.";
				connection.send({ type: "refused", code: "access-revoked", message });
				connection.close(4403, "access-revoked");
				expect(((await result) as { closed: unknown }).closed).toEqual({
					code: 4403,
					reason: "access-revoked",
					refused: { code: "access-revoked", message, retry: false },
				});
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"an error from the server ends the link with it and nothing to resume",
			async () => {
				const result = contract.run("connect", { until: "closed" });
				const connection = await contract.server.nextConnection();
				await connection.attach();
				connection.send({ type: "error", code: "protocol", message: "A second attach." });
				connection.close(1008, "protocol");
				expect(((await result) as { closed: unknown }).closed).toEqual({
					code: 1008,
					reason: "protocol",
					error: { code: "protocol", message: "A second attach.", by: "server" },
				});
			},
			CONTRACT_TIMEOUT_MS,
		);
	});
}
