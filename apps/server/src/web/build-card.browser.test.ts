// A build's card in headless Chromium against a real server and machine socket: the machine away (machine offline
// until its grace ends, then a decision) and back holding the run paused, then Resume; Stop confirmed, not
// confirmed and held; Discard through its dialog; the log as text, kept at its end, older lines on demand, and
// lines missed while the page's socket was away fetched on its return.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import type { WebSocketRoute } from "playwright-core";
import { Browsers, chromiumMissing, WAIT } from "../testing/browser";
import {
	BASE,
	type BuildsSetup,
	drop,
	expectMessage,
	held,
	readRun,
	reconnect,
	setupBuilds,
	sync,
	until,
} from "../testing/builds";
import {
	atEnd,
	card,
	fact,
	openBuildsPage,
	panel,
	runningBuild,
	sendLines,
	stillMarked,
	withStatus,
} from "../testing/builds-page";

const missing = chromiumMissing();

describe.skipIf(missing)("a build's card, in Chromium", () => {
	let clock: ManualClock;
	let s: BuildsSetup | undefined;
	const browsers = new Browsers();

	beforeEach(() => {
		clock = new ManualClock();
	});
	afterEach(async () => {
		await browsers.close();
		await s?.close();
		s = undefined;
	});

	test("the machine drops: machine offline until its grace ends, then a decision; back holding the run paused, Resume works", async () => {
		s = await setupBuilds(clock, { env: { MACHINE_OFFLINE_GRACE_MS: "20000" } });
		const setup = s;
		const id = await runningBuild(setup);
		const page = await openBuildsPage(browsers, setup);
		const c = card(page, id);
		await withStatus(c, "running").waitFor(WAIT);

		await drop(setup, setup.machine);
		await withStatus(c, "machine-offline").waitFor(WAIT);
		const { offlineUntil } = await readRun(setup, id);
		const until_ = await page.evaluate(
			(ms) => new Date(ms).toLocaleString([], { dateStyle: "medium", timeStyle: "short" }),
			offlineUntil!,
		);
		await c.getByText("machine offline", { exact: true }).waitFor(WAIT);
		await c
			.getByText(`ana's laptop is offline. Until ${until_} this run waits for it`, { exact: false })
			.waitFor(WAIT);
		expect(await fact(c, "Machine")).toBe("ana's laptop (offline)");
		expect(await c.getByRole("button").allTextContents()).toEqual(["Stop", "Discard"]);

		await clock.advance(20_000);
		await withStatus(c, "needs-decision").waitFor(WAIT);
		await c.getByText("needs a decision", { exact: true }).waitFor(WAIT);
		await c
			.getByText("Decide: discard this run, or leave it for the machine's return", { exact: false })
			.waitFor(WAIT);

		setup.machine = await reconnect(setup, [held(id, "paused", { document: setup.documentId })]);
		await withStatus(c, "paused").waitFor(WAIT);
		await c.getByText("Paused: it continues when someone resumes it.").waitFor(WAIT);
		expect(await c.getByRole("button").allTextContents()).toEqual(["Stop", "Resume", "Discard"]);
		await c.getByRole("button", { name: "Resume" }).click();
		const control = await expectMessage(setup.machine, "run-control");
		expect(control).toMatchObject({ run: id, action: "resume" });
		await c.getByText("@ana asked to resume it: waiting for the machine to confirm.").waitFor(WAIT);
		setup.machine.send({ type: "run-control-result", request: control.request, ok: true });
		await c.getByText("Resumed as @ana asked: the machine confirmed.").waitFor(WAIT);
		setup.machine.send({ type: "run-status", run: id, status: "running" });
		await withStatus(c, "running").waitFor(WAIT);
		expect(await stillMarked(page)).toBe(true);
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("Stop: confirmed, then Start again; not confirmed after 10 s; held while the machine is away; Discard asks first", async () => {
		s = await setupBuilds(clock);
		const setup = s;
		const first = await runningBuild(setup, { brief: "Build step one." });
		const page = await openBuildsPage(browsers, setup);
		const a = card(page, first);
		await withStatus(a, "running").waitFor(WAIT);
		await a.getByRole("button", { name: "Stop" }).click();
		const stop = await expectMessage(setup.machine, "run-control");
		expect(stop).toMatchObject({ run: first, action: "stop" });
		await a.getByText("@ana asked to stop it: waiting for the machine to confirm.").waitFor(WAIT);
		setup.machine.send({ type: "run-control-result", request: stop.request, ok: true });
		setup.machine.send({ type: "run-status", run: first, status: "stopped", reason: "Stopped as asked." });
		await withStatus(a, "stopped").waitFor(WAIT);
		await a.getByText("Stopped as @ana asked: the machine confirmed.").waitFor(WAIT);
		await a.getByText("Stopped as asked.", { exact: true }).waitFor(WAIT);
		expect(await a.getByRole("button").allTextContents()).toEqual(["Start again", "Discard"]);

		// Start again fills the form with the same kind, brief and base.
		await a.getByRole("button", { name: "Start again" }).click();
		const form = panel(page).getByRole("form", { name: "Start a build or investigation" });
		await form.waitFor(WAIT);
		expect(await form.getByLabel("Brief").inputValue()).toBe("Build step one.");
		expect(await form.getByLabel("Base commit").inputValue()).toBe(BASE);
		expect(await form.getByRole("radio", { name: /^Build/ }).isChecked()).toBe(true);
		expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("TEXTAREA");

		const second = await runningBuild(setup, { brief: "Build step two." });
		const b = card(page, second);
		await withStatus(b, "running").waitFor(WAIT);
		await b.getByRole("button", { name: "Stop" }).click();
		expect(await expectMessage(setup.machine, "run-control")).toMatchObject({ run: second, action: "stop" });
		await b.getByText("@ana asked to stop it: waiting for the machine to confirm.").waitFor(WAIT);
		await clock.advance(10_000);
		await b
			.getByText("Not confirmed: @ana asked to stop it, and the machine has not answered.")
			.waitFor(WAIT);

		// Away: a stop is held for the machine's return.
		await drop(setup, setup.machine);
		await withStatus(b, "machine-offline").waitFor(WAIT);
		await b.getByRole("button", { name: "Stop" }).click();
		await b.getByText("@ana asked to stop it: stopping when the machine is back.").waitFor(WAIT);

		// Discard asks first; Escape leaves it.
		await b.getByRole("button", { name: "Discard" }).click();
		const dialog = page.getByRole("dialog", { name: "Discard this build?" });
		await dialog.waitFor(WAIT);
		await dialog
			.getByText("Its machine is told to stop it and delete its workspace when it is back.", { exact: false })
			.waitFor(WAIT);
		await page.keyboard.press("Escape");
		await dialog.waitFor({ state: "hidden", ...WAIT });
		await b.waitFor(WAIT);
		await b.getByRole("button", { name: "Discard" }).click();
		await dialog.getByRole("button", { name: "Discard build" }).click();
		await b.waitFor({ state: "detached", ...WAIT });
		expect((await setup.get(`/api/builds/${second}`)).status).toBe(404);
		// Back, still holding it: the held discard reaches the machine.
		setup.machine = await reconnect(setup, [held(second, "paused", { document: setup.documentId })]);
		expect(await expectMessage(setup.machine, "run-control")).toMatchObject({
			run: second,
			action: "discard",
		});
		await a.waitFor(WAIT);
		expect(await stillMarked(page)).toBe(true);
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("the log: lines as text never HTML, kept at the end while the reader is there, older lines on demand", async () => {
		s = await setupBuilds(clock);
		const setup = s;
		const id = await runningBuild(setup);
		const xss = `<img src=x onerror="window.chopinXss='log'">`;
		const send = (from: number, to: number, text?: (n: number) => string) =>
			sendLines(setup, id, from, to, text);
		send(1, 200);
		send(201, 260, (n) => (n === 260 ? xss : `line ${n}`));
		await sync(setup, setup.machine);

		const page = await openBuildsPage(browsers, setup);
		const c = card(page, id);
		const log = c.locator(".log-lines");
		// The last 200 lines first.
		await c.locator('.log-lines li[data-seq="260"]').waitFor(WAIT);
		expect(await log.locator("li").count()).toBe(200);
		expect(await log.locator("li").first().getAttribute("data-seq")).toBe("61");
		expect(await c.locator('.log-lines li[data-seq="260"] .log-text').textContent()).toBe(xss);
		expect(await log.locator("img").count()).toBe(0);
		expect(await atEnd(log)).toBe(true);

		// New lines keep a reader at the end there.
		send(261, 265);
		await c.locator('.log-lines li[data-seq="265"]').waitFor(WAIT);
		await until(() => atEnd(log), "the log to follow its end");

		// Scrolled up, the reader stays where they are.
		await log.evaluate((el) => {
			el.scrollTop = 0;
			el.dispatchEvent(new Event("scroll"));
		});
		send(266, 270);
		await c.locator('.log-lines li[data-seq="270"]').waitFor(WAIT);
		expect(await log.evaluate((el) => el.scrollTop)).toBe(0);

		// Older lines, a page at a time, put in front without moving what the reader sees.
		await c.getByRole("button", { name: "Show older lines" }).click();
		await c.locator('.log-lines li[data-seq="1"]').waitFor(WAIT);
		expect(await log.locator("li").count()).toBe(270);
		await c.getByRole("button", { name: "Show older lines" }).waitFor({ state: "detached", ...WAIT });
		expect(await log.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
		await c.getByText("Log (270 lines)").waitFor(WAIT);
		expect(await page.evaluate(() => (window as { chopinXss?: unknown }).chopinXss)).toBeUndefined();
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("lines sent while the page's socket was away are fetched when it is back, after those it held", async () => {
		s = await setupBuilds(clock);
		const setup = s;
		const id = await runningBuild(setup);
		const lines = (from: number, to: number) => sendLines(setup, id, from, to);
		lines(1, 3);
		await sync(setup, setup.machine);
		// The page's live socket through a route the test can cut, and whose reconnect it holds.
		const routes: WebSocketRoute[] = [];
		let hold: Promise<void> | undefined;
		const page = await openBuildsPage(browsers, setup, "ana", (p) =>
			p.routeWebSocket(/\/ws\?document=/, async (ws) => {
				routes.push(ws);
				await hold;
				ws.connectToServer();
			}),
		);
		const c = card(page, id);
		await c.locator('.log-lines li[data-seq="3"]').waitFor(WAIT);

		let release = () => {};
		hold = new Promise<void>((resolve) => {
			release = resolve;
		});
		await routes.at(-1)!.close({ code: 1012, reason: "test" });
		await page.getByText("Offline: reconnecting…").waitFor(WAIT);
		lines(4, 6);
		await sync(setup, setup.machine);
		release();
		await page.getByText("Live", { exact: true }).waitFor(WAIT);
		await c.locator('.log-lines li[data-seq="6"]').waitFor(WAIT);
		expect(await c.locator(".log-lines li").allTextContents()).toEqual(
			[1, 2, 3, 4, 5, 6].map((n) => `output line ${n}`),
		);
		// Live again: the next line arrives as an event.
		lines(7, 7);
		await c.locator('.log-lines li[data-seq="7"]').waitFor(WAIT);
		expect(await stillMarked(page)).toBe(true);
		expect(browsers.errors).toEqual([]);
	}, 60_000);
});
