// The document page's builds panel in headless Chromium against a real server, with ana's machine on the real control
// channel (testing/builds.ts): a build started from the form reaches the machine and its card follows it live to
// succeeded; a retried start and a double click each make one run; an investigation with the base checked at the
// field; a reader's view; a writer without a machine told why. build-card.browser.test.ts has the card's controls.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { Browsers, chromiumMissing, sidewaysOverflow, WAIT } from "../testing/browser";
import { BASE, type BuildsSetup, claim, expectMessage, setupBuilds, sync, until } from "../testing/builds";
import {
	card,
	fact,
	openBuildsPage,
	openStartForm,
	panel,
	runningBuild,
	stillMarked,
	withStatus,
} from "../testing/builds-page";

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

	test("a build started from the form reaches the machine, and its card shows each report live until it succeeds", async () => {
		s = await setupBuilds(clock);
		const setup = s;
		const page = await openBuildsPage(browsers, setup);
		await panel(page).getByText("Nothing was built or investigated for this document yet.").waitFor(WAIT);
		const form = await openStartForm(page);
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
		await withStatus(c, "offered").waitFor(WAIT);
		expect(await c.getByRole("heading").textContent()).toBe("Build: Implement the plan in this document.");
		await c.getByText("waiting for its machine", { exact: true }).waitFor(WAIT);
		expect(await fact(c, "Machine")).toBe("ana's laptop");
		expect(await fact(c, "Base")).toBe(BASE.slice(0, 7));
		expect(await fact(c, "Started by")).toStartWith("@ana, ");

		await claim(setup.machine, id);
		await withStatus(c, "preparing").waitFor(WAIT);
		setup.machine.send({
			type: "run-status",
			run: id,
			status: "running",
			workspace: { path: `/home/ana/.chopin/runs/${id}/workspace`, branch: `chopin/${id}` },
		});
		await withStatus(c, "running").waitFor(WAIT);
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
		await withStatus(c, "succeeded").waitFor(WAIT);
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
		const page = await openBuildsPage(browsers, setup);
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
		const form = await openStartForm(page);
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

	test("an investigation: the form checks the base, the offer is an investigation, and a blocker shows", async () => {
		s = await setupBuilds(clock);
		const setup = s;
		const page = await openBuildsPage(browsers, setup);
		const form = await openStartForm(page);
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
		await withStatus(c, "blocked").waitFor(WAIT);
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
		const page = await openBuildsPage(browsers, setup, "ben");
		// Nothing started yet: a reader has no panel at all.
		expect(await panel(page).count()).toBe(0);
		const id = await runningBuild(setup);
		const c = card(page, id);
		await withStatus(c, "running").waitFor(WAIT);
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

	test("refusals: a writer without a machine is told why before and after Start, with the hint", async () => {
		s = await setupBuilds(clock);
		const setup = s;
		const page = await openBuildsPage(browsers, setup, "cy");
		const form = await openStartForm(page);
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
