// The composer's model and thinking choices (capability-catalog) in a real browser: a client attached through
// @chopin/agent-link's connectAgent reports its catalog; a person picks a model and a level in the page and the
// next turn carries them as spelled; when the client stops listing the model the composer says so, the turn
// falls back and Chat records it once; a command picked in the composer reaches the client as /name args.
import { describe, expect, test } from "bun:test";
import type { Catalog } from "@chopin/agent-link";
import { type AgentLink, connectAgent } from "@chopin/agent-link/client";
import { chromiumMissing, WAIT } from "../testing/browser";
import { numberedReplies, PlannerPages } from "../testing/planner-pages";

const missing = chromiumMissing();
const ALICE_TOKEN = "alice-browser-test-token-0123456789";

const CATALOG: Catalog = {
	models: {
		available: [
			{
				id: "gpt-5.1",
				name: "GPT-5.1",
				provider: { id: "openai", name: "OpenAI" },
				thinkingLevels: ["low", "xhigh"],
			},
			{
				id: "claude-opus",
				name: "Claude Opus",
				provider: { id: "anthropic", name: "Anthropic" },
				thinkingLevels: ["Default", "extra high", "High", "high"],
			},
			{ id: "local-7b", name: "Local 7B" },
		],
		default: { id: "gpt-5.1" },
	},
	commands: [{ name: "review", description: "Review a change", kind: "skill" }],
};

describe.skipIf(missing)("the composer's model and thinking choices", () => {
	let link: AgentLink | undefined;
	const world = PlannerPages.forSuite(ALICE_TOKEN, () => link?.detach());
	const { browsers } = world;

	test("a person's model and level reach the next turn; a model no longer offered falls back, said once", async () => {
		const doc = await world.createDocument();

		const { turns, answer } = numberedReplies();
		link = await connectAgent({
			url: world.api.server.publicUrl,
			token: ALICE_TOKEN,
			document: doc.id,
			resumable: false,
			capabilities: CATALOG,
			handlers: { start: () => {}, turn: answer, stop: () => ({ ok: true }), resume: () => ({ ok: true }) },
		});

		const page = await world.openAttached("Bob (bob)", doc.id);
		const model = page.getByLabel("Model", { exact: true });
		const thinking = page.getByLabel("Thinking level");
		await model.waitFor(WAIT);

		// Grouped by provider, in the client's order; the client's default first.
		expect(await model.locator("option").allTextContents()).toEqual([
			"Default (GPT-5.1)",
			"GPT-5.1",
			"Claude Opus",
			"Local 7B",
		]);
		expect(await model.locator("optgroup").evaluateAll((g) => g.map((e) => e.getAttribute("label")))).toEqual(
			["OpenAI", "Anthropic"],
		);
		// The default model's levels, with the composer's own first step.
		expect(await thinking.locator("option").allTextContents()).toEqual(["Default", "low", "xhigh"]);

		// A model that lists a level called Default: the composer's step is Model default; levels as spelled.
		await model.selectOption("claude-opus");
		await page.waitForFunction(
			() =>
				document.querySelector<HTMLSelectElement>('select[aria-label="Thinking level"]')?.options[0]?.text ===
				"Model default",
			undefined,
			WAIT,
		);
		expect(await thinking.locator("option").allTextContents()).toEqual([
			"Model default",
			"Default",
			"extra high",
			"High",
			"high",
		]);
		await thinking.selectOption("extra high");
		await page.waitForFunction(
			() =>
				document.querySelector<HTMLSelectElement>('select[aria-label="Thinking level"]')?.value ===
				"extra high",
			undefined,
			WAIT,
		);

		await page.getByLabel("Message").fill("@chopin ready?");
		await page.getByRole("button", { name: "Send" }).click();
		await page.locator('.message.planner[data-status="done"]', { hasText: "Answer 1." }).waitFor(WAIT);
		expect([turns[0]?.model, turns[0]?.thinkingLevel]).toEqual(["claude-opus", "extra high"]);

		// A model without levels has no reasoning control: the level picker is hidden.
		await model.selectOption("local-7b");
		await thinking.waitFor({ ...WAIT, state: "detached" });
		await model.selectOption("claude-opus");
		await thinking.waitFor(WAIT);

		// The client stops offering it: the composer says so until Chat records the fallback on a turn.
		link.reportCapabilities({ models: { available: [{ id: "gpt-5.1", name: "GPT-5.1" }] } });
		const unavailable = page.getByText("Claude Opus is no longer available");
		await unavailable.waitFor(WAIT);
		await page.getByLabel("Message").fill("@chopin and now?");
		await page.getByRole("button", { name: "Send" }).click();
		await page.locator('.message.planner[data-status="done"]', { hasText: "Answer 2." }).waitFor(WAIT);
		expect(turns[1]?.model).toBeUndefined();
		expect(turns[1]?.thinkingLevel).toBeUndefined();
		const notice = page.locator(".message.notice", {
			hasText: "The model Claude Opus chosen for this document",
		});
		await notice.waitFor(WAIT);
		await unavailable.waitFor({ ...WAIT, state: "detached" });

		// A command picked in the composer reaches the client as /name args.
		link.reportCapabilities(CATALOG);
		await page.getByLabel("Command").selectOption({ label: "/review (skill)" });
		await page.getByLabel("Input for /review").fill("the launch checklist");
		await page.getByRole("button", { name: "Send" }).click();
		await page.locator('.message.planner[data-status="done"]', { hasText: "Answer 3." }).waitFor(WAIT);
		expect(turns[2]?.prompt).toBe("/review the launch checklist");
		expect(await notice.count()).toBe(1);
		expect(browsers.errors).toEqual([]);
	}, 120_000);
});
