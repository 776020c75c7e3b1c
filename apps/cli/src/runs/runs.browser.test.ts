// The whole build as a person sees it, in Chromium: the document page's form offers the machine's checkout HEAD as
// the base, Start sends it to the real daemon, which runs the scripted ACP agent in its workspace; the card follows
// the agent's reports live and ends succeeded with its stage, its pull request and its result.
import { afterEach, describe, expect, test } from "bun:test";
import { Browsers, chromiumMissing, signInLocallyInBrowser, WAIT } from "../../../server/src/testing/browser";
import { card, openStartForm, withStatus } from "../../../server/src/testing/builds-page";
import { eventually, killCliProcesses } from "../testing/cli-process";
import { type RunSetup, setUpRuns, startDaemon } from "../testing/runs";

const missing = chromiumMissing();
const setups: RunSetup[] = [];
const browsers = new Browsers();
afterEach(async () => {
	await browsers.close();
	await killCliProcesses();
	for (const s of setups.splice(0)) await s.close();
});

describe.skipIf(missing)("a build from the document page, run by the real daemon", () => {
	test("started from the form, the card shows the agent's work live and ends succeeded", async () => {
		const s = await setUpRuns({ agent: ["build"] });
		setups.push(s);
		startDaemon(s.h);
		await eventually("the machine online", () => s.machines.online(s.machineId));
		const page = await browsers.open();
		await signInLocallyInBrowser(page, s.machines.target.publicUrl, `/d/${s.documentId}`, "ana");
		await page.getByText("Live", { exact: true }).waitFor(WAIT);
		const form = await openStartForm(page);
		await eventually("the checkout's HEAD offered as the base", async () =>
			(await form.getByLabel("Base commit").inputValue()) === s.base ? true : undefined,
		);
		await form.getByText(`It runs on your machine "ana's laptop"`).waitFor(WAIT);
		await form.getByRole("button", { name: "Start build" }).click();
		await form.getByText("Started the build: its card is below.").waitFor(WAIT);

		const c = page.locator("article[data-build-id]").first();
		const id = (await c.getAttribute("data-build-id"))!;
		await withStatus(card(page, id), "succeeded").waitFor(WAIT);
		await c.getByText("Edit", { exact: true }).waitFor(WAIT);
		const link = c.getByRole("link", { name: /Build the plan/ });
		expect(await link.getAttribute("href")).toBe("https://github.com/octo/score/pull/7");
		await c.getByText("Wrote BUILD.md.").waitFor(WAIT);
		await c.getByText("Read the brief (build): Implement the plan in this document.").waitFor(WAIT);
		expect(browsers.errors).toEqual([]);
	}, 60_000);
});
