import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "@chopin/agent-link/clock";
import { loadConfig } from "./config";
import { closeContext, createContext } from "./context";
import { createLogger } from "./log";
import { buildRouter } from "./server";
import { describeStores } from "./store/testing";
import { VERSION } from "./version";

let dataDir: string;
beforeEach(() => {
	dataDir = mkdtempSync(join(tmpdir(), "chopin-health-"));
});
afterEach(() => {
	rmSync(dataDir, { recursive: true, force: true });
});

describeStores("GET /healthz through the fetch handler", (t) => {
	test("is 200 with the version and the store kind while the store answers, 503 once it does not", async () => {
		const lines: string[] = [];
		const config = loadConfig({ DATA_DIR: dataDir });
		const context = await createContext(config, {
			store: t.store,
			clock: new ManualClock(),
			log: createLogger({ write: (l) => lines.push(l) }),
		});
		const router = buildRouter(context);
		const res = await router.fetch(new Request("http://chopin.test/healthz"));
		expect(res.status).toBe(200);
		expect(await res.json()).toEqual({ ok: true, version: VERSION, store: t.kind });
		const head = await router.fetch(new Request("http://chopin.test/healthz", { method: "HEAD" }));
		expect([head.status, await head.text()]).toEqual([200, ""]);
		expect((await router.fetch(new Request("http://chopin.test/healthz", { method: "POST" }))).status).toBe(
			405,
		);

		// The test owns this store, so the context must not close it; closing it here plays an outage.
		await closeContext(context);
		await t.store.ping();
		await t.store.close();
		const down = await router.fetch(new Request("http://chopin.test/healthz"));
		expect(down.status).toBe(503);
		expect(await down.json()).toMatchObject({ ok: false, code: "store-unavailable", store: t.kind });
		expect(lines.some((l) => l.includes("health check"))).toBe(true);
	});
});
