// What a person sees when a resumable Planner's link drops (spec: Resuming after a dropped link), in a real browser:
// the Planner bar says Disconnected, the run card keeps its status with a "disconnected" badge and the Decision stays
// answerable; the person answers meanwhile; the client resumes and gets the answer, and the page shows it attached
// again with the badge gone.
import { describe, expect, test } from "bun:test";
import { type AgentLink, connectAgent, type Session, type Turn } from "@chopin/agent-link/client";
import { chromiumMissing, WAIT } from "../testing/browser";
import { PlannerPages } from "../testing/planner-pages";

const missing = chromiumMissing();
const ALICE_TOKEN = "alice-browser-test-token-0123456789";

describe.skipIf(missing)("a resumable Planner whose link drops, in the page", () => {
	const links: AgentLink[] = [];
	const world = PlannerPages.forSuite(ALICE_TOKEN, () => {
		for (const link of links) link.detach();
	});
	const { browsers } = world;

	test("Disconnected with the run kept and the Decision answerable; attached again after the resume", async () => {
		const document = await world.createDocument();

		let asked: ReturnType<Session["ask"]> | undefined;
		const turn = async (t: Turn) => {
			t.session.reportRuns({
				active: ["deploy"],
				paused: [],
				cards: [
					{ id: "deploy", name: "Deploy", status: "running", started: 1, updated: 1, stages: [], waiting: 1 },
				],
			});
			asked = t.session.ask({ method: "confirm", title: "Ship on Friday?", message: "The plan says so." });
			await t.end("finished");
		};
		const options = {
			url: world.api.server.publicUrl,
			token: ALICE_TOKEN,
			document: document.id,
			handlers: { start: () => {}, turn, stop: () => ({ ok: true }), resume: () => ({ ok: true }) },
		};
		const first = await connectAgent(options);
		links.push(first);
		expect(first.features.has("resumable-sessions")).toBe(true);

		const page = await world.openAttached("Bob (bob)", document.id);
		await page.getByLabel("Message").fill("@chopin can we ship on Friday?");
		await page.getByRole("button", { name: "Send" }).click();
		const card = page.getByRole("region", { name: "Decision 1" });
		await card.getByRole("heading", { name: "Ship on Friday?" }).waitFor(WAIT);
		const run = page.locator('.run-card[data-run-id="deploy"]');
		await run.waitFor(WAIT);

		// The link drops under the server (no close frame from the client): its work is kept.
		const closed = first.closed;
		for (const ws of world.api.server.context.sockets.open) if (ws.data.kind === "agent") ws.terminate();
		const dropped = await closed;
		expect(dropped.resume).toBeDefined();
		await page.locator('[data-planner-state="disconnected"]').waitFor(WAIT);
		await run.locator(".badge", { hasText: "disconnected" }).waitFor(WAIT);
		expect(await run.getAttribute("data-status")).toBe("running");

		// Answered in the page while the client is away: held for it.
		await card.getByRole("button", { name: "Yes" }).click();
		await page.locator('[data-status="answered"]', { hasText: "Ship on Friday?" }).waitFor(WAIT);

		const second = await connectAgent({ ...options, resume: dropped.resume });
		links.push(second);
		const result = await asked!;
		expect(result).toMatchObject({ status: "answered", value: true });
		await page.locator('[data-planner-state="attached"]').waitFor(WAIT);
		await run.locator(".badge", { hasText: "disconnected" }).waitFor({ state: "detached", ...WAIT });
		expect(browsers.errors).toEqual([]);
	}, 120_000);
});
