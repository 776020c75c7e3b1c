// Mermaid labels are plain text, in a real Chromium: a diagram that turns HTML labels back on (an init directive
// or front matter config) still draws its labels as text, so nothing in a label becomes markup in the renderer
// frame (no image it names is even asked for) or in the SVG the page shows.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestStore, type TestStore } from "../store/testing";
import { type ApiServer, createDocument, startApiServer } from "../testing/api-server";
import { Browsers, chromiumMissing, signInLocallyInBrowser, WAIT } from "../testing/browser";

const missing = chromiumMissing();

const SOURCE = [
	"# Diagrams",
	"",
	"```mermaid",
	'%%{init: {"htmlLabels": true, "flowchart": {"htmlLabels": true}}}%%',
	"graph TD",
	'  A["<img src=/probe-init.png> <b>bold</b>"] --> B',
	"```",
	"",
	"```mermaid",
	"---",
	"config:",
	"  htmlLabels: true",
	"---",
	"classDiagram",
	'  class A["<img src=/probe-front.png>"]',
	"```",
	"",
].join("\n");

describe.skipIf(missing)("Mermaid labels", () => {
	let store: TestStore;
	let api: ApiServer;
	const browsers = new Browsers();

	beforeAll(async () => {
		store = await createTestStore("sqlite");
		api = await startApiServer(store.store);
	});
	afterAll(async () => {
		await browsers.close();
		await api?.stop();
		await store?.close();
	});

	test("HTML in a label is drawn as its text, even when the diagram asks for HTML labels", async () => {
		const id = await createDocument(api, SOURCE, "Diagrams");
		const page = await browsers.open();
		const consoleLines: string[] = [];
		page.on("console", (m) => consoleLines.push(m.text()));
		// The SVGs the renderer frame posts to the page (the page's policy keeps it from reading its blob: URLs).
		await page.addInitScript(() => {
			const svgs: string[] = [];
			Object.assign(window, { drawnSvgs: svgs });
			window.addEventListener("message", (event) => {
				if (typeof event.data?.svg === "string") svgs.push(event.data.svg);
			});
		});
		await signInLocallyInBrowser(page, api.server.publicUrl, `/d/${id}`, "Alice (alice)");
		// Both fences leave "loading": drawn, or shown as code.
		await page.waitForFunction(
			() =>
				document.querySelectorAll("figure[data-diagram]").length === 2 &&
				document.querySelectorAll('figure[data-diagram="loading"]').length === 0,
			undefined,
			WAIT,
		);
		expect(
			await page
				.locator("figure[data-diagram]")
				.evaluateAll((f) => f.map((e) => e.getAttribute("data-diagram"))),
		).toEqual(["drawn", "drawn"]);
		const svgs = await page.evaluate(() => (window as unknown as { drawnSvgs: string[] }).drawnSvgs);
		expect(svgs.length).toBe(2);
		for (const svg of svgs) {
			expect(svg).not.toContain("foreignObject");
			expect(svg).not.toMatch(/<(img|b)\b/);
			expect(svg).toContain("&lt;img src=");
		}
		expect(svgs[0]).toContain("&lt;b&gt;");
		// Markup in the frame would have asked for the images (and been refused by its policy).
		expect(consoleLines.filter((line) => line.includes("probe-"))).toEqual([]);
	}, 90_000);
});
