// The builds panel's browser tests' shared steps: a document page opened in Chromium for one of testing/builds.ts'
// people, the panel and a run's card on it, a run started and running on the machine, and what a card shows.
import { expect } from "bun:test";
import type { Locator, Page } from "playwright-core";
import { type Browsers, signInLocallyInBrowser, WAIT } from "./browser";
import { type BuildsSetup, claim, expectMessage, startRun, sync } from "./builds";

/** The setup's document opened in a fresh browser signed in as `who`, live, its window marked (see stillMarked). */
export async function openBuildsPage(
	browsers: Browsers,
	setup: BuildsSetup,
	who = "ana",
	before?: (page: Page) => Promise<void>,
): Promise<Page> {
	const page = await browsers.open();
	await before?.(page);
	await signInLocallyInBrowser(page, setup.target.publicUrl, `/d/${setup.documentId}`, who);
	await page.getByText("Live", { exact: true }).waitFor(WAIT);
	await page.evaluate(() => Object.assign(window, { chopinMark: true }));
	return page;
}

/** Whether the page is the one openBuildsPage opened: a reload would have lost the mark. */
export function stillMarked(page: Page): Promise<boolean> {
	return page.evaluate(() => (window as unknown as { chopinMark?: boolean }).chopinMark === true);
}

export const panel = (page: Page) => page.getByRole("region", { name: "Builds and investigations" });
export const card = (page: Page, id: string) => page.locator(`article[data-build-id="${id}"]`);

/** The card, once it shows this display status. */
export const withStatus = (c: Locator, displayStatus: string) =>
	c.and(c.page().locator(`[data-status="${displayStatus}"]`));

/** Opens the start form. */
export async function openStartForm(page: Page): Promise<Locator> {
	await panel(page).getByText("Start a build or investigation").click();
	return panel(page).getByRole("form", { name: "Start a build or investigation" });
}

/** A run started over the API, claimed and running on the machine (no page involved); returns its id. */
export async function runningBuild(setup: BuildsSetup, body: Record<string, unknown> = {}): Promise<string> {
	const { build } = await startRun(setup, body);
	expect((await expectMessage(setup.machine, "run-offer")).run.id).toBe(build.id);
	await claim(setup.machine, build.id);
	setup.machine.send({
		type: "run-status",
		run: build.id,
		status: "running",
		workspace: { path: `/home/ana/.chopin/runs/${build.id}/workspace`, branch: `chopin/${build.id}` },
	});
	await sync(setup, setup.machine);
	return build.id;
}

/** Sends log lines from..to (inclusive) for the run, `line <n>` unless `text` says otherwise. */
export function sendLines(
	setup: BuildsSetup,
	run: string,
	from: number,
	to: number,
	text: (n: number) => string = (n) => `line ${n}`,
): void {
	setup.machine.send({
		type: "run-log",
		run,
		entries: Array.from({ length: to - from + 1 }, (_, i) => ({
			at: setup.clock.now(),
			kind: "output" as const,
			text: text(from + i),
		})),
	});
}

/** The card's fact after `name` (its <dt>). */
export async function fact(c: Locator, name: string): Promise<string> {
	return (await c.locator(`dt:text-is("${name}") + dd`).textContent()) ?? "";
}

/** Whether a scrolled box shows its end. */
export function atEnd(box: Locator): Promise<boolean> {
	return box.evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 4);
}
