// The pages in a real headless Chromium: sign in (local mode), create a document, talk in Chat, and
// answer a Decision asked through the API, with a second browser watching the same document, every
// change arriving in both without a reload.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { createTestStore, type TestStore } from "../store/testing";
import { type ApiServer, startApiServer } from "../testing/api-server";
import {
	Browsers,
	chromiumMissing,
	sidewaysOverflow,
	signInLocallyInBrowser,
	WAIT,
} from "../testing/browser";

const missing = chromiumMissing();

describe.skipIf(missing)("pages in Chromium", () => {
	let store: TestStore;
	let api: ApiServer;
	const browsers = new Browsers();
	const { errors, contexts } = browsers;

	beforeAll(async () => {
		store = await createTestStore("sqlite");
		api = await startApiServer(store.store);
	});
	afterAll(async () => {
		await browsers.close();
		await api?.stop();
		await store?.close();
	});

	const browser = () => browsers.open();
	const signIn = (page: Page, path: string, account: string) =>
		signInLocallyInBrowser(page, api.server.publicUrl, path, account);

	/** Marks the page's window; a reload would lose the mark. */
	const mark = (page: Page) => page.evaluate(() => Object.assign(window, { chopinMark: true }));
	const stillMarked = (page: Page) =>
		page.evaluate(() => (window as unknown as { chopinMark?: boolean }).chopinMark === true);

	test("sign in, create a document, Chat and answer Decisions; a second browser sees it all live", async () => {
		const alice = await browser();
		await signIn(alice, "/", "Alice (alice)");
		await alice.getByLabel("Title").fill("Browser plan");
		await alice.getByRole("button", { name: "Create document" }).click();
		await alice.waitForURL(/\/d\/[a-z2-7]{12}$/, WAIT);
		const id = new URL(alice.url()).pathname.split("/").pop()!;
		await alice.getByText("Live", { exact: true }).waitFor(WAIT);
		await expect(
			alice.getByRole("heading", { level: 1, name: "Browser plan" }).count(),
		).resolves.toBeGreaterThan(0);

		const bob = await browser();
		await signIn(bob, `/d/${id}`, "Bob (bob)");
		await bob.getByText("Live", { exact: true }).waitFor(WAIT);
		await mark(alice);
		await mark(bob);

		// Chat: a message appears in both browsers.
		await alice.getByLabel("Message").fill("Hello from **Alice**");
		await alice.getByRole("button", { name: "Send" }).click();
		await bob.locator(".message.person", { hasText: "Hello from Alice" }).waitFor(WAIT);
		expect(await bob.locator(".message.person .body strong").textContent()).toBe("Alice");
		// The composer empties once alice's own post is answered, which may come after bob sees it.
		await alice.waitForFunction(
			() => (document.getElementById("composer-body") as HTMLTextAreaElement | null)?.value === "",
			undefined,
			WAIT,
		);

		// An @chopin message with no Planner: refused to its sender only, and kept in the composer.
		await alice.getByLabel("Message").fill("@chopin what next?");
		await alice.getByRole("button", { name: "Send" }).click();
		const refusal = alice.locator(".refusal");
		await refusal.waitFor(WAIT);
		expect(await refusal.textContent()).toContain("Connect a machine to get a reply.");
		await expect(alice.getByLabel("Message").inputValue()).resolves.toBe("@chopin what next?");

		// A Decision asked through the API shows in both; bob picks an option, alice writes an answer.
		const asked = await api.call("alice", "POST", `/api/documents/${id}/decisions`, {
			input: {
				method: "questionnaire",
				params: {
					questions: [
						{
							question: "Which store?\nThe **embedded** one is simpler.",
							header: "Store",
							options: [
								{ label: "SQLite", description: "One file" },
								{ label: "PostgreSQL", description: "A server" },
							],
						},
						{ question: "Why?", header: "Reason", options: [] },
					],
				},
			},
		});
		expect(asked.status).toBe(201);
		for (const page of [alice, bob]) {
			await page.getByRole("region", { name: "Decision 1" }).waitFor(WAIT);
			await page.getByRole("heading", { name: "Which store?" }).waitFor(WAIT);
		}
		const bobCard = bob.getByRole("region", { name: "Decision 1" });
		await bobCard.getByRole("radio", { name: /SQLite/ }).check();
		await bobCard.locator("form.question").nth(0).getByRole("button", { name: "Answer" }).click();
		await alice.locator("p.given", { hasText: "SQLite" }).waitFor(WAIT);

		const aliceCard = alice.getByRole("region", { name: "Decision 1" });
		await aliceCard
			.locator("form.question")
			.nth(1)
			.getByLabel("Your answer")
			.fill("It is one file to back up.");
		await aliceCard.locator("form.question").nth(1).getByRole("button", { name: "Answer" }).click();
		for (const page of [alice, bob]) {
			await page.locator('[data-decision-id][data-status="answered"]').waitFor(WAIT);
			await page.locator("p.given", { hasText: "It is one file to back up." }).waitFor(WAIT);
		}
		const decisions = (await (await api.call("alice", "GET", `/api/documents/${id}/decisions`)).json()) as {
			decisions: { status: string; answers: { answeredBy: string }[] }[];
		};
		expect(decisions.decisions[0]!.status).toBe("answered");
		expect(decisions.decisions[0]!.answers.map((a) => a.answeredBy)).toEqual(["bob", "alice"]);

		// A Planner reply streams in with its Work details, and a run card appears.
		const chat = api.server.context.domain.chat;
		const reply = await chat.replies.start(id, {});
		await chat.replies.appendDelta(reply.id, "Reading the ");
		await chat.replies.startTool(reply.id, { toolCallId: "c1", name: "read_plan", input: '{"offset":1}' });
		await bob.locator(".message.planner", { hasText: "Reading the" }).waitFor(WAIT);
		await chat.replies.finishTool(reply.id, { toolCallId: "c1", name: "read_plan", result: "ok" });
		await chat.replies.appendDelta(reply.id, "plan now.");
		await chat.replies.finish(reply.id, { status: "done" });
		await bob
			.locator('.message.planner[data-status="done"]', { hasText: "Reading the plan now." })
			.waitFor(WAIT);
		await bob.getByText("Work details (1 tool)").click();
		await bob.locator(".work-details code", { hasText: "read_plan" }).waitFor(WAIT);
		await api.server.context.domain.runs.apply(id, "s1", {
			active: ["r1"],
			paused: [],
			cards: [
				{
					id: "r1",
					name: "Build the plan",
					status: "running",
					started: 1,
					updated: 2,
					waiting: 0,
					stages: [],
				},
			],
		});
		await alice.locator(".run-card", { hasText: "Build the plan" }).waitFor(WAIT);

		expect(await stillMarked(alice)).toBe(true);
		expect(await stillMarked(bob)).toBe(true);
		expect(errors).toEqual([]);
	}, 120_000);

	test("readable at phone width, and usable from the keyboard", async () => {
		const page = contexts[0]!.pages()[0]!;
		await page.setViewportSize({ width: 375, height: 740 });
		await page.goto(new URL("/", api.server.publicUrl).href);
		await page.getByRole("link", { name: "Browser plan" }).waitFor(WAIT);
		const overflow = await sidewaysOverflow(page);
		expect(overflow).toBeLessThanOrEqual(0);
		// Tab reaches the document's link, and Enter opens it.
		for (let i = 0; i < 20; i++) {
			await page.keyboard.press("Tab");
			const focused = await page.evaluate(() => document.activeElement?.textContent ?? "");
			if (focused === "Browser plan") break;
		}
		await page.keyboard.press("Enter");
		await page.waitForURL(/\/d\//, WAIT);
		await page.getByLabel("Message").waitFor(WAIT);
		const docOverflow = await sidewaysOverflow(page);
		expect(docOverflow).toBeLessThanOrEqual(0);
		expect(errors).toEqual([]);
	}, 60_000);
});
