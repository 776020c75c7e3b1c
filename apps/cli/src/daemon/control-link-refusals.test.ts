import { afterEach, describe, expect, test } from "bun:test";
import { helloMachine, LOCAL_ENV, pairLocally } from "../../../server/src/testing/machines";
import { startTestServer } from "../../../server/src/testing/server";
import { signInLocally } from "../../../server/src/testing/sign-in";
import { closeOpened, link, open, pairedServer, STATE } from "../testing/control-link-harness";

afterEach(closeOpened);

describe("final refusals end the link with their CliError", () => {
	test("revoked while connected: machine-revoked, and no further attempt", async () => {
		const { server, credential, machineId } = await pairedServer();
		const l = link(server.url, credential);
		const ended = l.control.run().then(
			() => undefined,
			(e: unknown) => e,
		);
		await l.next("connected");
		await server.context.machines.revoke(machineId);
		const error = await ended;
		expect(error).toMatchObject({ code: "machine-revoked", exitCode: 10 });
		expect(l.events.filter((e) => e.type === "attempt")).toHaveLength(1);
		expect(l.events.some((e) => e.type === "waiting")).toBe(false);
	});

	test("a revoked credential is refused at the upgrade: machine-revoked at once", async () => {
		const { server, credential, machineId } = await pairedServer();
		await server.context.machines.revoke(machineId);
		const error = await link(server.url, credential)
			.control.run()
			.catch((e) => e);
		expect(error).toMatchObject({ code: "machine-revoked", exitCode: 10 });
	});

	test("a refusal nested past MAX_JSON_DEPTH is not read: its final code is not acted on, the link waits", async () => {
		const deep = "[".repeat(9000) + "]".repeat(9000);
		const refusing = Bun.serve({
			port: 0,
			hostname: "127.0.0.1",
			fetch: () =>
				new Response(`{"code":"machine-revoked","message":"Revoked.","extra":${deep}}`, {
					status: 401,
					headers: { "content-type": "application/json" },
				}),
		});
		open.push({ close: () => refusing.stop(true) });
		const l = link(`http://127.0.0.1:${refusing.port}`, `chopin_m_${"A".repeat(43)}`);
		const ended = l.control.run().catch((e) => e);
		// Before the limit, the link ended at once with machine-revoked, read from the body.
		const first = await Promise.race([l.next("waiting"), ended.then((error) => ({ type: "ended", error }))]);
		expect(first).toMatchObject({ type: "waiting" });
		await l.control.stop();
		// Stopped by us, not ended by a refusal.
		expect(await ended).toBeUndefined();
	});

	test("another process with the same credential takes over (4409): machine-replaced, exit 15", async () => {
		const { server, credential } = await pairedServer();
		const l = link(server.url, credential);
		const ended = l.control.run().then(
			() => undefined,
			(e: unknown) => e,
		);
		await l.next("connected");
		const other = await helloMachine(server.url, credential);
		open.push({ close: () => other.client.close() });
		const error = (await ended) as Error;
		expect(error).toMatchObject({ code: "machine-replaced", exitCode: 15 });
		expect(error.message).toContain("Another chopin process");
	});

	test("no checkout's repository the owner may push to: repository-access-lost, exit 11", async () => {
		const { server, credential } = await pairedServer();
		const l = link(server.url, credential, {
			state: () => ({ ...STATE, checkouts: [{ path: "/src/secret", repository: "octo/secret" }] }),
		});
		const error = await l.control.run().catch((e) => e);
		expect(error).toMatchObject({ code: "repository-access-lost", exitCode: 11 });
		expect(error.message).toContain("ana can no longer push to octo/secret");
	});

	test("a server on a newer minimum: client-version-refused with this install's upgrade command", async () => {
		const server = await startTestServer({ env: { ...LOCAL_ENV, MIN_CLI_VERSION: "0.1.5" } });
		open.push(server);
		const target = { fetch: (req: Request) => server.fetch(req), publicUrl: server.context.config.publicUrl };
		const { jar } = await signInLocally(target, "ana");
		const { credential } = await pairLocally(target, jar);
		const error = await link(server.url, credential)
			.control.run()
			.catch((e) => e);
		expect(error).toMatchObject({ code: "client-version-refused", exitCode: 12 });
		expect(error.message).toContain("npm install -g @chopin/cli@0.1.5");
	});
});

describe("a server's Retry-After", () => {
	test("a Retry-After of 0 or of hours is held to the schedule's bounds (1 to 60 s): no hammering, no machine away for good", async () => {
		let retryAfter = 0;
		const busy = Bun.serve({
			port: 0,
			hostname: "127.0.0.1",
			fetch: () =>
				Response.json(
					{ code: "server-busy", message: "Busy.", retryAfter },
					{ status: 503, headers: { "retry-after": String(retryAfter) } },
				),
		});
		open.push({ close: () => busy.stop(true) });
		const l = link(`http://127.0.0.1:${busy.port}`, `chopin_m_${"A".repeat(43)}`);
		const running = l.control.run();
		expect(await l.next("waiting")).toMatchObject({ delayMs: 1_000 });
		retryAfter = 86_400;
		await l.clock.advance(1_000);
		await l.next("attempt");
		expect(await l.next("waiting")).toMatchObject({ delayMs: 60_000 });
		await l.control.stop();
		await running;
	});
});
