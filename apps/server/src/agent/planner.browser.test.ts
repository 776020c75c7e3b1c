// The whole Planner loop in a real browser: a client attached through @chopin/agent-link's connectAgent
// answers an @chopin message with streamed text and a question; the page shows the text streaming into
// Chat and the Decision, a person answers it in the page, and the client receives the answer.
import { describe, expect, test } from "bun:test";
import { type AgentLink, connectAgent, type Turn } from "@chopin/agent-link/client";
import { chromiumMissing, WAIT } from "../testing/browser";
import { PlannerPages } from "../testing/planner-pages";

const missing = chromiumMissing();
const ALICE_TOKEN = "alice-browser-test-token-0123456789";

describe.skipIf(missing)("an attached Planner in the page", () => {
	let link: AgentLink | undefined;
	const world = PlannerPages.forSuite(ALICE_TOKEN, () => link?.detach());
	const { browsers } = world;

	test("an @chopin message is answered with streamed text and a question answered in the page", async () => {
		const document = await world.createDocument();

		// What the Planner saw and was told, for the assertions at the end.
		const seen: { prompt?: string; answer?: unknown; planTitle?: string } = {};
		let release: () => void = () => {};
		const firstWords = new Promise<void>((resolve) => {
			release = resolve;
		});
		const answerTurn = async (turn: Turn) => {
			seen.prompt = turn.prompt;
			const plan = await turn.callHostTool("read_plan", {});
			seen.planTitle = /Launch plan/.test(JSON.stringify(plan.output)) ? "Launch plan" : undefined;
			await turn.emit({ type: "text-start", id: "reply" });
			await turn.emit({ type: "text-delta", id: "reply", delta: "I read the Launch plan. " });
			// The page must show these words while the turn still runs: the question below waits for a person.
			release();
			const asked = turn.session.ask({
				method: "confirm",
				title: "Ship on Friday?",
				message: "The plan says so.",
			});
			const result = await asked;
			const value = "value" in result ? result.value : undefined;
			seen.answer = value;
			await turn.emit({
				type: "text-delta",
				id: "reply",
				delta: value === true ? "The room said yes: shipping Friday." : "The room said no.",
			});
			await turn.emit({ type: "text-end", id: "reply" });
			await turn.end("finished");
		};
		link = await connectAgent({
			url: world.api.server.publicUrl,
			token: ALICE_TOKEN,
			document: document.id,
			resumable: false,
			handlers: {
				start: () => {},
				turn: answerTurn,
				stop: () => ({ ok: true }),
				resume: () => ({ ok: true }),
			},
		});

		const page = await world.openAttached("Bob (bob)", document.id);

		await page.getByLabel("Message").fill("@chopin can we ship on Friday?");
		await page.getByRole("button", { name: "Send" }).click();

		// The first words stream in while the reply is still being written.
		await firstWords;
		const reply = page.locator(".message.planner", { hasText: "I read the Launch plan." });
		await reply.waitFor(WAIT);
		expect(await reply.getAttribute("data-status")).toBe("streaming");

		// The question arrives as a Decision; bob answers Yes in the page.
		const card = page.getByRole("region", { name: "Decision 1" });
		await card.getByRole("heading", { name: "Ship on Friday?" }).waitFor(WAIT);
		await card.getByRole("button", { name: "Yes" }).click();

		// The client got the answer and finished the reply, which the page shows done.
		await page
			.locator('.message.planner[data-status="done"]', { hasText: "The room said yes: shipping Friday." })
			.waitFor(WAIT);
		expect(seen.prompt).toBe("@bob: @chopin can we ship on Friday?");
		expect(seen.planTitle).toBe("Launch plan");
		expect(seen.answer).toBe(true);
		expect(browsers.errors).toEqual([]);
	}, 120_000);
});
