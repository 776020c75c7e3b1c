// What a person sees of threads in a real browser, with a client offering session-forks attached through
// @chopin/agent-link's connectAgent: a thread opened on a message, an @chopin reply there answered in the thread
// by a session forked from the turn that answered the root, the main Chat untouched, and another member's page
// counting the thread live and opening it.
import { describe, expect, test } from "bun:test";
import { type AgentLink, connectAgent, type Session } from "@chopin/agent-link/client";
import { chromiumMissing, WAIT } from "../testing/browser";
import { numberedReplies, PlannerPages } from "../testing/planner-pages";

const missing = chromiumMissing();
const ALICE_TOKEN = "alice-browser-test-token-0123456789";

describe.skipIf(missing)("threads in the page", () => {
	let link: AgentLink | undefined;
	const world = PlannerPages.forSuite(ALICE_TOKEN, () => link?.detach());
	const { browsers } = world;

	test("a reply in a thread is answered there by a session forked from the root's turn", async () => {
		const { id: documentId } = await world.createDocument("Thread plan");
		const replies = numberedReplies();
		const forks: Session["from"][] = [];
		link = await connectAgent({
			url: world.api.server.publicUrl,
			token: ALICE_TOKEN,
			document: documentId,
			resumable: false,
			handlers: {
				start: () => {},
				fork: (session) => {
					forks.push(session.from);
				},
				turn: (turn) => replies.answer(turn),
				stop: () => ({ ok: true }),
				resume: () => ({ ok: true }),
			},
		});
		expect(link.features.has("session-forks")).toBe(true);
		const bob = await world.openAttached("Bob (bob)", documentId);
		const alice = await world.openAttached("Alice (alice)", documentId);

		await bob.getByLabel("Message", { exact: true }).fill("@chopin plan the launch");
		await bob.getByRole("button", { name: "Send" }).click();
		await bob.locator('.message.planner[data-status="done"]', { hasText: "Answer 1." }).waitFor(WAIT);

		const root = bob.locator(".chat:not(.thread) .message.person", { hasText: "@chopin plan the launch" });
		await root.getByRole("button", { name: "Reply in thread" }).click();
		const thread = bob.getByRole("region", { name: "Thread" });
		await thread.getByText("Thread on @bob's message").waitFor(WAIT);
		await thread.getByLabel("Reply in thread").fill("@chopin what about Monday?");
		await thread.getByRole("button", { name: "Send" }).click();
		await thread.locator('.message.planner[data-status="done"]', { hasText: "Answer 2." }).waitFor(WAIT);
		await thread.locator(".message.person", { hasText: "@chopin what about Monday?" }).waitFor(WAIT);

		// The thread's session branched from the turn that answered its root.
		const [first, second] = replies.turns;
		expect(forks).toEqual([{ session: first!.session.id, turn: first!.id }]);
		expect(second!.session.from).toEqual({ session: first!.session.id, turn: first!.id });
		expect(second!.prompt).toBe("@bob: @chopin what about Monday?");

		// The main Chat holds the root and its reply only, on both pages; alice's counts the thread live.
		const chat = (page: typeof bob) => page.getByRole("region", { name: "Chat" });
		expect(await chat(bob).locator(".message").count()).toBe(2);
		const count = alice.getByRole("button", { name: "2 replies in thread" });
		await count.waitFor(WAIT);
		expect(await chat(alice).locator(".message").count()).toBe(2);
		await count.click();
		const aliceThread = alice.getByRole("region", { name: "Thread" });
		await aliceThread.locator(".message.planner", { hasText: "Answer 2." }).waitFor(WAIT);
		expect(await aliceThread.locator(".message").count()).toBe(3);
		await aliceThread.getByRole("button", { name: "Close thread" }).click();
		await aliceThread.waitFor({ ...WAIT, state: "detached" });
		expect(browsers.errors).toEqual([]);
	}, 120_000);
});
