// Every page fits a 390 px wide screen whatever it holds: each one opened in headless Chromium at 390 px with long
// unbroken words wherever a person or a machine can put text (a document's title and body, a run card and its
// stage, a Chat message, a machine's label and checkout, a pairing's label), and nothing scrolls sideways.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { createTestStore, type TestStore } from "../store/testing";
import { type ApiServer, createDocument, startApiServer } from "../testing/api-server";
import { Browsers, chromiumMissing, signInLocallyInBrowser, WAIT } from "../testing/browser";
import { cliRequest, pairLocally, type Target, TEST_CLIENT } from "../testing/machines";

const missing = chromiumMissing();

const WIDTH = 390;
/** One word, no break opportunity anywhere: far wider than the screen in any font. */
const word = (n: number) =>
	"Pneumonoultramicroscopicsilicovolcanoconiosis".repeat(Math.ceil(n / 45)).slice(0, n);
const LONG = word(120);

describe.skipIf(missing)("pages at 390 px with long unbroken words", () => {
	let store: TestStore;
	let api: ApiServer;
	let target: Target;
	let page: Page;
	let documentId: string;
	const browsers = new Browsers();

	beforeAll(async () => {
		store = await createTestStore("sqlite");
		api = await startApiServer(store.store);
		target = { fetch: (req) => api.server.fetch(req), publicUrl: api.server.publicUrl };
		const source = `# ${LONG}\n\n${word(300)} and \`${LONG}\` and https://example.com/${LONG}\n\n## ${LONG}\n\n- ${LONG}\n`;
		documentId = await createDocument(api, source, LONG);
		await api.server.context.domain.runs.apply(documentId, "s1", {
			active: ["run-1"],
			paused: [],
			cards: [
				{
					id: "run-1",
					name: LONG,
					status: "running",
					started: 1_760_000_000,
					updated: 1_760_000_100,
					stages: [
						{
							id: "stage-1",
							name: LONG,
							parentIds: [],
							kind: "tool",
							status: "running",
							started: 1_760_000_000,
						},
					],
					waiting: 0,
				},
			],
		});
		const posted = await api.call("alice", "POST", `/api/documents/${documentId}/messages`, { body: LONG });
		expect(posted.status).toBe(201);
		const asked = await api.call("alice", "POST", `/api/documents/${documentId}/decisions`, {
			input: {
				method: "questionnaire",
				params: {
					questions: [
						{
							question: `${LONG}?`,
							header: word(40),
							options: [
								{ label: LONG, description: LONG },
								{ label: "Short", description: "A short one" },
							],
						},
					],
				},
			},
		});
		expect(asked.status).toBe(201);
		await pairLocally(target, api.jars.alice, { label: word(128), repositories: ["acme/app"] });
		page = await browsers.open();
		await page.setViewportSize({ width: WIDTH, height: 844 });
	}, 60_000);
	afterAll(async () => {
		await browsers.close();
		await api?.stop();
		await store?.close();
	});

	/**
	 * How far the page is wider than the screen (0 when it fits), with the innermost elements that reach
	 * past its right edge when it does not, so a failure says what to fix.
	 */
	const overflow = () =>
		page.evaluate((width) => {
			const by = Math.max(0, document.documentElement.scrollWidth - width);
			if (by === 0) return 0;
			const past = [...document.body.querySelectorAll("*")].filter(
				(el) => el.getBoundingClientRect().right > width + 0.5,
			);
			const innermost = past.filter((el) => !past.some((other) => other !== el && el.contains(other)));
			const names = innermost.map(
				(el) =>
					`${el.tagName.toLowerCase()}${el.className ? `.${String(el.className).split(" ").join(".")}` : ""}`,
			);
			return `${by} px too wide: ${[...new Set(names)].join(", ")}`;
		}, WIDTH);

	test("the sign-in page", async () => {
		await page.goto(new URL("/sign-in", api.server.publicUrl).href);
		await page.getByRole("button").first().waitFor(WAIT);
		expect(await overflow()).toBe(0);
	});

	test("the documents list, with a document of a long title", async () => {
		await signInLocallyInBrowser(page, api.server.publicUrl, "/", "Alice (alice)");
		await page.getByRole("link", { name: LONG }).waitFor(WAIT);
		expect(await overflow()).toBe(0);
	});

	test("the document page: long title, body, Decision, run card and stage, Chat message", async () => {
		await page.goto(new URL(`/d/${documentId}`, api.server.publicUrl).href);
		await page.getByRole("heading", { level: 1, name: LONG }).first().waitFor(WAIT);
		await page.locator("article.run-card").getByText(LONG).first().waitFor(WAIT);
		await page.locator("section.chat ol.messages").getByText(LONG).waitFor(WAIT);
		await page.getByRole("region", { name: "Decision 1" }).waitFor(WAIT);
		expect(await overflow()).toBe(0);
	});

	test("the machines page, with a machine of a long label", async () => {
		await page.goto(new URL("/machines", api.server.publicUrl).href);
		await page.getByText(word(128)).first().waitFor(WAIT);
		expect(await overflow()).toBe(0);
	});

	test("the pairing page, with a long label and checkout", async () => {
		const started = await cliRequest(target, "POST", "/api/connector/pairings", {
			body: {
				label: word(128),
				checkouts: [{ path: `/home/dev/src/${LONG}`, repository: "acme/app", branch: LONG }],
				client: TEST_CLIENT,
			},
		});
		expect(started.status).toBe(201);
		const { link } = (await started.json()) as { link: string };
		await page.goto(link);
		await page.getByRole("heading", { level: 1 }).waitFor(WAIT);
		await page.getByText(`/home/dev/src/${LONG}`, { exact: false }).first().waitFor(WAIT);
		expect(await overflow()).toBe(0);
		expect(browsers.errors).toEqual([]);
	});
});
