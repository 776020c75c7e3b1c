// A run card's stages in headless Chromium (spec: Run stage deltas): a stage whose parent is not reported yet
// shows at the top level, and moves under its parent, shown stopped below a failed one, when a delta brings
// the parent; stages whose links form a cycle (or name themselves) still show, once each.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestStore, type TestStore } from "../store/testing";
import { type ApiServer, createDocument, startApiServer } from "../testing/api-server";
import { Browsers, chromiumMissing, signInLocallyInBrowser, WAIT } from "../testing/browser";
import { card, delta, stage } from "../testing/run-cards";

const missing = chromiumMissing();

describe.skipIf(missing)("run card stages in Chromium", () => {
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

	test("an unknown parent leaves its stage at the top level until a delta brings it; cycles still show", async () => {
		const documentId = await createDocument(api);
		const report = (...cards: ReturnType<typeof card>[]) =>
			api.server.context.domain.runs.apply(documentId, "s1", { active: ["r1"], paused: [], cards });
		await report(
			card("r1", {
				name: "Nested run",
				stages: [
					stage("first"),
					stage("child", { status: "running", parentIds: ["late"] }),
					stage("self", { status: "running", parentIds: ["self"] }),
					stage("loop-a", { parentIds: ["loop-b"] }),
					stage("loop-b", { parentIds: ["loop-a"] }),
				],
			}),
		);
		const page = await browsers.open();
		await signInLocallyInBrowser(page, api.server.publicUrl, `/d/${documentId}`, "Alice (alice)");
		const run = page.locator('.run-card[data-run-id="r1"]');
		await run.getByText("Stages (5)").click();
		/** The names at each depth: top-level stages, and each one's children by name. */
		const tree = () =>
			run.evaluate((el) => {
				const walk = (list: Element | null): unknown[] =>
					[...(list?.children ?? [])].map((li) => {
						const name = li.querySelector(":scope > span")!.textContent!;
						const status = li.getAttribute("data-status");
						const below = walk(li.querySelector(":scope > ul.stages"));
						return below.length ? [name, status, below] : [name, status];
					});
				return walk(el.querySelector("details > ul.stages"));
			});
		expect(await tree()).toEqual([
			["Stage first", "completed"],
			["Stage child", "running"],
			["Stage self", "running"],
			["Stage loop-a", "completed", [["Stage loop-b", "completed"]]],
		]);

		await report(delta("r1", [stage("late", { status: "failed" })]));
		await run.getByText("Stages (6)").waitFor(WAIT);
		expect(await tree()).toEqual([
			["Stage first", "completed"],
			["Stage self", "running"],
			["Stage loop-a", "completed", [["Stage loop-b", "completed"]]],
			["Stage late", "failed", [["Stage child", "stopped"]]],
		]);
		expect(browsers.errors).toEqual([]);
	}, 60_000);
});
