import { expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { loadConfig } from "./config";
import { createDomain, startDomain } from "./domain";
import { createLogger } from "./log";
import { describeStores } from "./store/testing";

describeStores("the domain, wired from a context", (t) => {
	test("services share one hub; start-up seeds the demo document when DEMO is on", async () => {
		const lines: string[] = [];
		const ctx = {
			store: t.store,
			clock: new ManualClock(),
			log: createLogger({ write: (line) => lines.push(line) }),
			config: loadConfig({ AUTH_MODE: "local", DEMO: "on", MAX_STORED_IMAGE_BYTES: "2048" }),
		};
		const domain = createDomain(ctx);
		const seen: string[] = [];
		domain.hub.subscribeAll((_id, event) => seen.push(event.type));
		await startDomain(domain, ctx);
		const [doc] = await domain.documents.listByRepository("demo/score");
		expect(doc?.title).toBe("Welcome to Chopin");
		await domain.chat.post(doc!.id, { author: "demo", body: "hello" });
		await domain.decisions.create(doc!.id, { input: { method: "input", title: "Name?" } });
		await domain.runs.apply(doc!.id, "s", { active: [], paused: [], cards: [] });
		expect(seen).toEqual(["document.updated", "message.created", "decision.created"]);
		expect(lines.join("\n")).toContain("demo document created");
		await startDomain(domain, ctx);
		expect(await domain.documents.count()).toBe(1);
	});
});
