// What a person sees of steer-turn and retry-turn in a real browser, with a client attached through
// @chopin/agent-link's connectAgent: a message sent while chopin replies reaches the running turn (and one the
// client refuses is said in Chat); Retry on a failed reply takes it out for everyone and runs the message again.
import { afterEach, describe, expect, test } from "bun:test";
import { type AgentLink, connectAgent, type Handlers, type Turn } from "@chopin/agent-link/client";
import { chromiumMissing, WAIT } from "../testing/browser";
import { PlannerPages } from "../testing/planner-pages";

const missing = chromiumMissing();
const ALICE_TOKEN = "alice-browser-test-token-0123456789";

describe.skipIf(missing)("steering and retrying in the page", () => {
	let link: AgentLink | undefined;
	const world = PlannerPages.forSuite(ALICE_TOKEN);
	const { browsers } = world;
	afterEach(() => {
		link?.detach();
		link = undefined;
	});

	async function documentWithPlanner(
		title: string,
		handlers: Pick<Handlers, "turn" | "steer">,
		features: "retry-turn"[] = [],
	) {
		const created = await world.api.call("alice", "POST", "/api/documents", {
			repository: "acme/app",
			title,
			source: `# ${title}\n\nShip on Friday.\n`,
		});
		expect(created.status).toBe(201);
		const { document } = (await created.json()) as { document: { id: string } };
		link = await connectAgent({
			url: world.api.server.publicUrl,
			token: ALICE_TOKEN,
			document: document.id,
			resumable: false,
			features,
			handlers: { start: () => {}, stop: () => ({ ok: true }), resume: () => ({ ok: true }), ...handlers },
		});
		return document.id;
	}

	test("a person steers a running reply; a message the client refuses is said to be unread", async () => {
		const steered: string[] = [];
		let heard: (prompt: string) => void = () => {};
		const turn = async (t: Turn) => {
			await t.emit({ type: "text-start", id: "r" });
			await t.emit({ type: "text-delta", id: "r", delta: "Drafting the plan. " });
			// The reply goes on once a person's message has been steered into it.
			const prompt = await new Promise<string>((resolve) => {
				heard = resolve;
			});
			await t.emit({ type: "text-delta", id: "r", delta: `Noted (${prompt}).` });
			await t.emit({ type: "text-end", id: "r" });
			await t.end("finished");
		};
		const steer = (_turn: Turn, prompt: string) => {
			steered.push(prompt);
			if (steered.length === 1) return { ok: false, message: "The model is mid-call; not now." };
			heard(prompt);
			return { ok: true };
		};
		const documentId = await documentWithPlanner("Steer plan", { turn, steer });
		expect(link!.features.has("steer-turn")).toBe(true);
		const page = await world.openAttached("Bob (bob)", documentId);

		await page.getByLabel("Message").fill("@chopin plan the launch");
		await page.getByRole("button", { name: "Send" }).click();
		await page
			.locator('.message.planner[data-status="streaming"]', { hasText: "Drafting the plan." })
			.waitFor(WAIT);

		// The first message sent meanwhile is refused by the client: Chat says it was not read.
		await page.getByLabel("Message").fill("@chopin skip Monday");
		await page.getByRole("button", { name: "Send" }).click();
		await page.locator(".message.person", { hasText: "@chopin skip Monday" }).waitFor(WAIT);
		await page
			.locator(".message.notice", {
				hasText: "chopin did not read @bob's message: The model is mid-call; not now.",
			})
			.waitFor(WAIT);

		// The second reaches the running turn, which answers it in the same reply.
		await page.getByLabel("Message").fill("@chopin ship Friday, not Thursday");
		await page.getByRole("button", { name: "Send" }).click();
		await page.locator(".message.person", { hasText: "@chopin ship Friday, not Thursday" }).waitFor(WAIT);
		await page
			.locator('.message.planner[data-status="done"]', {
				hasText: "Noted (@bob: @chopin ship Friday, not Thursday).",
			})
			.waitFor(WAIT);
		expect(await page.locator(".refusal").count()).toBe(0);
		expect(await page.locator(".message.planner").count()).toBe(1);
		expect(steered).toEqual(["@bob: @chopin skip Monday", "@bob: @chopin ship Friday, not Thursday"]);
		expect(browsers.errors).toEqual([]);
	}, 120_000);

	test("Retry on a failed reply: it leaves Chat for everyone, and the message runs again with retry", async () => {
		const turns: { prompt: string; message?: string; retry: boolean }[] = [];
		const turn = async (t: Turn) => {
			turns.push({ prompt: t.prompt, message: t.message, retry: t.retry });
			await t.emit({ type: "text-start", id: "r" });
			if (turns.length === 1) {
				await t.emit({ type: "text-delta", id: "r", delta: "Half an answer" });
				throw new Error("The provider is down.");
			}
			await t.emit({ type: "text-delta", id: "r", delta: "The whole answer." });
			await t.emit({ type: "text-end", id: "r" });
		};
		const documentId = await documentWithPlanner("Retry plan", { turn }, ["retry-turn"]);
		const bob = await world.openAttached("Bob (bob)", documentId);
		const alice = await world.openAttached("Alice (alice)", documentId);

		await bob.getByLabel("Message").fill("@chopin plan the launch");
		await bob.getByRole("button", { name: "Send" }).click();
		const failed = (page: typeof bob) =>
			page.locator('.message.planner[data-status="failed"]', { hasText: "Half an answer" });
		await failed(bob).getByText("The reply failed: The provider is down.").waitFor(WAIT);
		await failed(alice).waitFor(WAIT);
		// Retry is the sender's: alice, who did not send the message, has no button.
		expect(await failed(alice).getByRole("button", { name: "Retry" }).count()).toBe(0);

		await failed(bob).getByRole("button", { name: "Retry" }).click();
		for (const page of [bob, alice]) {
			await page
				.locator('.message.planner[data-status="done"]', { hasText: "The whole answer." })
				.waitFor(WAIT);
			await failed(page).waitFor({ state: "detached", ...WAIT });
			expect(await page.locator(".message.planner").count()).toBe(1);
			// Retry is not a new message: the one message stays, once.
			expect(await page.locator(".message.person").count()).toBe(1);
		}
		expect(turns).toHaveLength(2);
		expect(turns[0]).toMatchObject({ prompt: "@bob: @chopin plan the launch", retry: false });
		expect(turns[1]).toEqual({ prompt: turns[0]!.prompt, message: turns[0]!.message, retry: true });
		expect(turns[0]!.message).toBeString();
		expect(browsers.errors).toEqual([]);
	}, 120_000);
});
