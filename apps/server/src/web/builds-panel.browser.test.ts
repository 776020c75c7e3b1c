// The document page's builds panel in headless Chromium against a real server, with ana's machine on the real control
// channel (testing/builds.ts): a build started from the form reaches the machine and its card follows it live to
// succeeded; duplicate clicks make one run; the machine away (machine offline, needs a decision) and back with the
// run paused, then Resume; Stop (confirmed, not confirmed, held) and Discard; an investigation; a reader's view;
// the log as text, kept at its end, older lines on demand; refusals with their message and hint.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import type { Locator, Page, WebSocketRoute } from "playwright-core";
import {
	Browsers,
	chromiumMissing,
	sidewaysOverflow,
	signInLocallyInBrowser,
	WAIT,
} from "../testing/browser";
import {
	BASE,
	type BuildsSetup,
	claim,
	drop,
	expectMessage,
	held,
	readRun,
	reconnect,
	setupBuilds,
	startRun,
	sync,
	until,
} from "../testing/builds";

const missing = chromiumMissing();

describe.skipIf(missing)("the builds panel, in Chromium", () => {
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

	/** The setup, opened in a browser signed in as `who`, live. */
	async function openPage(
		setup: BuildsSetup,
		who = "ana",
		before?: (page: Page) => Promise<void>,
	): Promise<Page> {
		const page = await browsers.open();
		await before?.(page);
		await signInLocallyInBrowser(page, setup.target.publicUrl, `/d/${setup.documentId}`, who);
		await page.getByText("Live", { exact: true }).waitFor(WAIT);
		await mark(page);
		return page;
	}

	const panel = (page: Page) => page.getByRole("region", { name: "Builds and investigations" });
	const card = (page: Page, id: string) => page.locator(`article[data-build-id="${id}"]`);
	/** The card, once it shows this display status. */
	const status = (c: Locator, displayStatus: string) =>
		c.and(c.page().locator(`[data-status="${displayStatus}"]`));
	const openForm = async (page: Page) => {
		await panel(page).getByText("Start a build or investigation").click();
		return panel(page).getByRole("form", { name: "Start a build or investigation" });
	};

	/** A run started over the API, claimed and running on the machine (no page involved). */
	async function runningBuild(setup: BuildsSetup, body: Record<string, unknown> = {}): Promise<string> {
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

	test("a build started from the form reaches the machine, and its card shows each report live until it succeeds", async () => {
		s = await setupBuilds(clock);
		const setup = s;
		const page = await openPage(setup);
		await panel(page).getByText("Nothing was built or investigated for this document yet.").waitFor(WAIT);
		const form = await openForm(page);
		// The base is the HEAD of ana's checkout as her machine reported it; the brief says what a build does.
		await until(
			async () => (await form.getByLabel("Base commit").inputValue()) === BASE,
			"the base prefilled",
		);
		expect(await form.getByLabel("Brief").inputValue()).toBe("Implement the plan in this document.");
		await form.getByText(`It runs on your machine "ana's laptop"`).waitFor(WAIT);
		expect(await form.getByRole("radio", { name: /^Build/ }).isChecked()).toBe(true);
		await form.getByRole("button", { name: "Start build" }).click();

		const offer = await expectMessage(setup.machine, "run-offer");
		expect(offer.run).toMatchObject({
			kind: "build",
			base: BASE,
			brief: "Implement the plan in this document.",
			requestedBy: "ana",
		});
		const id = offer.run.id;
		await form.getByText("Started the build: its card is below.").waitFor(WAIT);
		const c = card(page, id);
		await status(c, "offered").waitFor(WAIT);
		expect(await c.getByRole("heading").textContent()).toBe("Build: Implement the plan in this document.");
		await c.getByText("waiting for its machine", { exact: true }).waitFor(WAIT);
		expect(await fact(c, "Machine")).toBe("ana's laptop");
		expect(await fact(c, "Base")).toBe(BASE.slice(0, 7));
		expect(await fact(c, "Started by")).toStartWith("@ana, ");

		await claim(setup.machine, id);
		await status(c, "preparing").waitFor(WAIT);
		setup.machine.send({
			type: "run-status",
			run: id,
			status: "running",
			workspace: { path: `/home/ana/.chopin/runs/${id}/workspace`, branch: `chopin/${id}` },
		});
		await status(c, "running").waitFor(WAIT);
		expect(await fact(c, "Branch")).toBe(`chopin/${id}`);
		// The path is the owner's alone: events do not carry it, so her card reads the run for it.
		await c.getByText(`/home/ana/.chopin/runs/${id}/workspace`).waitFor(WAIT);

		setup.machine.send({
			type: "run-log",
			run: id,
			entries: [
				{ at: clock.now(), kind: "message", text: "Reading the plan." },
				{ at: clock.now(), kind: "tool", text: "git status" },
			],
		});
		await c.locator('.log-lines li[data-seq="2"]').waitFor(WAIT);
		expect(await c.locator(".log-lines li").allTextContents()).toEqual([
			"message Reading the plan.",
			"tool git status",
		]);

		const report = (r: Parameters<typeof setup.server.context.builds.report>[1]) =>
			setup.server.context.builds.report(id, r);
		await report({ tool: "report_progress", input: { stage: "Read the plan", status: "completed" } });
		await report({
			tool: "report_progress",
			input: { stage: "Write the code", status: "running", detail: "2 of 3 files" },
		});
		const stages = c.getByRole("region", { name: "Stages" });
		await stages.getByText("Write the code").waitFor(WAIT);
		expect(await stages.locator("li").allTextContents()).toEqual([
			"Read the plan completed",
			"Write the code running · 2 of 3 files",
		]);
		await report({ tool: "report_progress", input: { stage: "Write the code", status: "completed" } });
		await stages.locator('li[data-status="completed"]').nth(1).waitFor(WAIT);

		await report({
			tool: "report_pull_request",
			input: { url: "https://github.com/octo/score/pull/7", title: "Step one" },
		});
		await report({ tool: "report_pull_request", input: { url: "http://plain.example/pull/8" } });
		const prs = c.getByRole("region", { name: "Pull requests" });
		const link = prs.getByRole("link", { name: "Step one (https://github.com/octo/score/pull/7)" });
		await link.waitFor(WAIT);
		expect(await link.getAttribute("href")).toBe("https://github.com/octo/score/pull/7");
		expect(await link.getAttribute("target")).toBe("_blank");
		expect(await link.getAttribute("rel")).toContain("noopener");
		// Not https: shown, never a link.
		await prs.getByText("http://plain.example/pull/8").waitFor(WAIT);
		expect(await prs.getByRole("link").count()).toBe(1);

		await report({
			tool: "report_result",
			input: {
				outcome: "succeeded",
				summary: "Step one is **in**.\n\n<img src=x onerror=\"window.chopinXss='summary'\">",
				branch: `chopin/${id}`,
				commit: "b".repeat(40),
			},
		});
		setup.machine.send({ type: "run-status", run: id, status: "finished" });
		await status(c, "succeeded").waitFor(WAIT);
		const result = c.getByRole("region", { name: "Result" });
		expect(await result.getByRole("heading").textContent()).toBe("Result: succeeded");
		expect(await result.locator("strong").textContent()).toBe("in");
		await result.getByText(`<img src=x onerror="window.chopinXss='summary'">`).waitFor(WAIT);
		expect(await result.locator("img").count()).toBe(0);
		expect(await fact(c, "Last commit")).toBe("bbbbbbb");
		await c.getByText("Ended", { exact: true }).waitFor(WAIT);
		// A succeeded run can only be discarded.
		expect(await c.getByRole("button").allTextContents()).toEqual(["Discard"]);

		expect(await stillMarked(page)).toBe(true);
		expect(await page.evaluate(() => (window as { chopinXss?: unknown }).chopinXss)).toBeUndefined();
		await page.setViewportSize({ width: 375, height: 740 });
		expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
		expect(browsers.errors).toEqual([]);
	}, 90_000);

	test("a start retried after a lost answer, and a double click, each make one run", async () => {
		s = await setupBuilds(clock);
		const setup = s;
		const page = await openPage(setup);
		const sent: Record<string, unknown>[] = [];
		let lose = true;
		await page.route("**/api/documents/*/builds", async (route) => {
			const request = route.request();
			if (request.method() !== "POST") return route.continue();
			sent.push(JSON.parse(request.postData() ?? "{}") as Record<string, unknown>);
			if (!lose) return route.continue();
			// The server gets the start and makes the run; its answer never reaches the page.
			lose = false;
			await route.fetch();
			await route.abort("connectionreset");
		});
		const form = await openForm(page);
		await until(
			async () => (await form.getByLabel("Base commit").inputValue()) === BASE,
			"the base prefilled",
		);
		const start = form.getByRole("button", { name: "Start build" });
		await start.click();
		await form.getByText("Chopin could not be reached.", { exact: false }).waitFor(WAIT);
		const offer = await expectMessage(setup.machine, "run-offer");
		await start.click();
		await form.getByText("This build was started already: its card is below.").waitFor(WAIT);
		await card(page, offer.run.id).waitFor(WAIT);
		expect(sent).toHaveLength(2);
		expect(sent[1]!.key).toBe(sent[0]!.key as string);
		expect(String(sent[0]!.key)).toMatch(/^page-[0-9a-f]{32}$/);

		// Another start, double-clicked: one request, one run.
		await clock.advance(1_000);
		await form.getByLabel("Brief").fill("Only step two.");
		await start.dblclick();
		await form.getByText("Started the build: its card is below.").waitFor(WAIT);
		const second = await expectMessage(setup.machine, "run-offer");
		expect(second.run.brief).toBe("Only step two.");
		await card(page, second.run.id).waitFor(WAIT);
		await sync(setup, setup.machine);
		expect(setup.machine.queued.filter((m) => m.type === "run-offer")).toEqual([]);
		expect(sent).toHaveLength(3);
		expect(sent[2]!.key).not.toBe(sent[0]!.key as string);
		const listed = (await (await setup.get(`/api/documents/${setup.documentId}/builds`)).json()) as {
			builds: { id: string }[];
		};
		expect(listed.builds.map((b) => b.id)).toEqual([second.run.id, offer.run.id]);
		expect(await panel(page).locator("article[data-build-id]").count()).toBe(2);
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("the machine drops: machine offline until its grace ends, then a decision; back holding the run paused, Resume works", async () => {
		s = await setupBuilds(clock, { env: { MACHINE_OFFLINE_GRACE_MS: "20000" } });
		const setup = s;
		const id = await runningBuild(setup);
		const page = await openPage(setup);
		const c = card(page, id);
		await status(c, "running").waitFor(WAIT);

		await drop(setup, setup.machine);
		await status(c, "machine-offline").waitFor(WAIT);
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
		await status(c, "needs-decision").waitFor(WAIT);
		await c.getByText("needs a decision", { exact: true }).waitFor(WAIT);
		await c
			.getByText("Decide: discard this run, or leave it for the machine's return", { exact: false })
			.waitFor(WAIT);

		setup.machine = await reconnect(setup, [held(id, "paused", { document: setup.documentId })]);
		await status(c, "paused").waitFor(WAIT);
		await c.getByText("Paused: it continues when someone resumes it.").waitFor(WAIT);
		expect(await c.getByRole("button").allTextContents()).toEqual(["Stop", "Resume", "Discard"]);
		await c.getByRole("button", { name: "Resume" }).click();
		const control = await expectMessage(setup.machine, "run-control");
		expect(control).toMatchObject({ run: id, action: "resume" });
		await c.getByText("@ana asked to resume it: waiting for the machine to confirm.").waitFor(WAIT);
		setup.machine.send({ type: "run-control-result", request: control.request, ok: true });
		await c.getByText("Resumed as @ana asked: the machine confirmed.").waitFor(WAIT);
		setup.machine.send({ type: "run-status", run: id, status: "running" });
		await status(c, "running").waitFor(WAIT);
		expect(await stillMarked(page)).toBe(true);
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("Stop: confirmed, then Start again; not confirmed after 10 s; held while the machine is away; Discard asks first", async () => {
		s = await setupBuilds(clock);
		const setup = s;
		const first = await runningBuild(setup, { brief: "Build step one." });
		const page = await openPage(setup);
		const a = card(page, first);
		await status(a, "running").waitFor(WAIT);
		await a.getByRole("button", { name: "Stop" }).click();
		const stop = await expectMessage(setup.machine, "run-control");
		expect(stop).toMatchObject({ run: first, action: "stop" });
		await a.getByText("@ana asked to stop it: waiting for the machine to confirm.").waitFor(WAIT);
		setup.machine.send({ type: "run-control-result", request: stop.request, ok: true });
		setup.machine.send({ type: "run-status", run: first, status: "stopped", reason: "Stopped as asked." });
		await status(a, "stopped").waitFor(WAIT);
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
		await status(b, "running").waitFor(WAIT);
		await b.getByRole("button", { name: "Stop" }).click();
		expect(await expectMessage(setup.machine, "run-control")).toMatchObject({ run: second, action: "stop" });
		await b.getByText("@ana asked to stop it: waiting for the machine to confirm.").waitFor(WAIT);
		await clock.advance(10_000);
		await b
			.getByText("Not confirmed: @ana asked to stop it, and the machine has not answered.")
			.waitFor(WAIT);

		// Away: a stop is held for the machine's return.
		await drop(setup, setup.machine);
		await status(b, "machine-offline").waitFor(WAIT);
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

	test("an investigation: the form checks the base, the offer is an investigation, and a blocker shows", async () => {
		s = await setupBuilds(clock);
		const setup = s;
		const page = await openPage(setup);
		const form = await openForm(page);
		await until(
			async () => (await form.getByLabel("Base commit").inputValue()) === BASE,
			"the base prefilled",
		);
		await form.getByRole("radio", { name: /^Investigate/ }).check();
		// The build's default brief is no question.
		expect(await form.getByLabel("Brief").inputValue()).toBe("");
		await form.getByLabel("Brief").fill("Why does the rollout need two steps?\nLook at deploy/.");
		await form.getByLabel("Base commit").fill("abc1234");
		await form.getByRole("button", { name: "Start investigation" }).click();
		await form
			.getByText("The base must be a full commit id: 40 hexadecimal characters (64 for SHA-256).")
			.waitFor(WAIT);
		expect(await form.getByLabel("Base commit").getAttribute("aria-invalid")).toBe("true");
		await form.getByLabel("Base commit").fill(` ${BASE.toUpperCase()} `);
		await form.getByRole("button", { name: "Start investigation" }).click();
		const offer = await expectMessage(setup.machine, "run-offer");
		expect(offer.run).toMatchObject({
			kind: "investigation",
			base: BASE,
			brief: "Why does the rollout need two steps?\nLook at deploy/.",
		});
		const c = card(page, offer.run.id);
		await c.waitFor(WAIT);
		expect(await c.getByRole("heading").first().textContent()).toBe(
			"Investigation: Why does the rollout need two steps?",
		);
		await claim(setup.machine, offer.run.id);
		await setup.server.context.builds.report(offer.run.id, {
			tool: "report_blocker",
			input: { message: "deploy/ is not in this checkout." },
		});
		await c.getByText("deploy/ is not in this checkout.").waitFor(WAIT);
		expect(await c.locator(".build-blocker").textContent()).toBe("Blocked: deploy/ is not in this checkout.");
		setup.machine.send({ type: "run-status", run: offer.run.id, status: "finished" });
		await status(c, "blocked").waitFor(WAIT);
		expect(await c.getByRole("button").allTextContents()).toEqual(["Start again", "Discard"]);
		await c.getByRole("button", { name: "Start again" }).click();
		expect(await form.getByRole("radio", { name: /^Investigate/ }).isChecked()).toBe(true);
		expect(await form.getByLabel("Brief").inputValue()).toBe(
			"Why does the rollout need two steps?\nLook at deploy/.",
		);
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("a reader sees the runs live, but no form and no buttons; the machine by its owner, no path", async () => {
		s = await setupBuilds(clock);
		const setup = s;
		const page = await openPage(setup, "ben");
		// Nothing started yet: a reader has no panel at all.
		expect(await panel(page).count()).toBe(0);
		const id = await runningBuild(setup);
		const c = card(page, id);
		await status(c, "running").waitFor(WAIT);
		expect(await fact(c, "Machine")).toBe("@ana's machine");
		expect(await fact(c, "Branch")).toBe(`chopin/${id}`);
		expect(await c.getByText("/home/ana/").count()).toBe(0);
		setup.machine.send({
			type: "run-log",
			run: id,
			entries: [{ at: clock.now(), kind: "output", text: "compiling" }],
		});
		await c.locator('.log-lines li[data-seq="1"]').waitFor(WAIT);
		expect(await panel(page).getByRole("button").count()).toBe(0);
		expect(await panel(page).getByText("Start a build or investigation").count()).toBe(0);
		expect(await stillMarked(page)).toBe(true);
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("the log: lines as text never HTML, kept at the end while the reader is there, older lines on demand", async () => {
		s = await setupBuilds(clock);
		const setup = s;
		const id = await runningBuild(setup);
		const xss = `<img src=x onerror="window.chopinXss='log'">`;
		const send = (from: number, to: number, text = (n: number) => `line ${n}`) =>
			setup.machine.send({
				type: "run-log",
				run: id,
				entries: Array.from({ length: to - from + 1 }, (_, i) => ({
					at: clock.now(),
					kind: "output" as const,
					text: text(from + i),
				})),
			});
		send(1, 200);
		send(201, 260, (n) => (n === 260 ? xss : `line ${n}`));
		await sync(setup, setup.machine);

		const page = await openPage(setup);
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
		const lines = (from: number, to: number) =>
			setup.machine.send({
				type: "run-log",
				run: id,
				entries: Array.from({ length: to - from + 1 }, (_, i) => ({
					at: clock.now(),
					kind: "output" as const,
					text: `line ${from + i}`,
				})),
			});
		lines(1, 3);
		await sync(setup, setup.machine);
		// The page's live socket through a route the test can cut, and whose reconnect it holds.
		const routes: WebSocketRoute[] = [];
		let hold: Promise<void> | undefined;
		const page = await openPage(setup, "ana", (p) =>
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

	test("refusals: a writer without a machine is told why before and after Start, with the hint", async () => {
		s = await setupBuilds(clock);
		const setup = s;
		const page = await openPage(setup, "cy");
		const form = await openForm(page);
		await form
			.getByText("None of your machines can run it: choose one with the machine line above", { exact: false })
			.waitFor(WAIT);
		// No machine, so no HEAD to offer: the base is typed.
		expect(await form.getByLabel("Base commit").inputValue()).toBe("");
		await form.getByLabel("Base commit").fill(BASE);
		await form.getByRole("button", { name: "Start build" }).click();
		await form
			.getByText(
				"Connect a machine to start this build. Choose one with the machine button, or run `chopin connect` on a machine that can build. Builds and investigations run on one of your own paired machines.",
			)
			.waitFor(WAIT);
		await sync(setup, setup.machine);
		expect(setup.machine.queued.filter((m) => m.type === "run-offer")).toEqual([]);
		expect(browsers.errors).toEqual([]);
	}, 60_000);
});

/** The card's fact after `name` (its <dt>). */
async function fact(c: Locator, name: string): Promise<string> {
	return (await c.locator(`dt:text-is("${name}") + dd`).textContent()) ?? "";
}

/** Whether a scrolled box shows its end. */
function atEnd(box: Locator): Promise<boolean> {
	return box.evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 4);
}

/** Marks the page's window; a reload would lose the mark. */
const mark = (page: Page) => page.evaluate(() => Object.assign(window, { chopinMark: true }));
const stillMarked = (page: Page) =>
	page.evaluate(() => (window as unknown as { chopinMark?: boolean }).chopinMark === true);
