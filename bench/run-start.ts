/**
 * A build's start as a person feels it: from the click on "Start build" on the document page (real Chromium, its
 * real live socket) to the agent's first update shown on the run's card, with the run's workspace made from a
 * checkout of 10,000 files. The machine is the real daemon (`chopin run` from source) with the sandbox as it is by
 * default here (bubblewrap), the agent the scripted ACP agent (a real ACP SDK agent in its own bun process), the
 * server a real one on loopback. Each start is stopped before the next. Target: under 2 s, median of 10.
 *
 * Prints each start, then the median and where the time went, from the daemon's log: the offer reaching the
 * daemon (click to "starting the build"), the workspace (to "started the agent": git, mostly), and the agent's own
 * start to its first update (ACP initialize, the session, the prompt, the update on its way to the page).
 *
 *   bun bench/run-start.ts [starts, default 10] [files, default 10000]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eventually, killCliProcesses, readLog } from "../apps/cli/src/testing/cli-process";
import { git } from "../apps/cli/src/testing/git";
import { setUpRuns, startDaemon } from "../apps/cli/src/testing/runs";
import { Browsers, signInLocallyInBrowser, WAIT } from "../apps/server/src/testing/browser";
import { openStartForm } from "../apps/server/src/testing/builds-page";

const STARTS = Number(process.argv[2] ?? 10);
const FILES = Number(process.argv[3] ?? 10_000);
const FIRST_UPDATE = "stalling until cancelled";

const median = (values: number[]) => {
	const sorted = [...values].sort((a, b) => a - b);
	const mid = sorted.length >> 1;
	return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const s = await setUpRuns({ agent: ["stall"] });
const browsers = new Browsers();
try {
	// The checkout: FILES files in 100 folders, committed and packed, as a real repository would be.
	const perDir = Math.ceil(FILES / 100);
	for (let d = 0; d < 100; d++) {
		const dir = join(s.h.checkout, "src", `d${d}`);
		mkdirSync(dir, { recursive: true });
		for (let f = 0; f < perDir && d * perDir + f < FILES; f++)
			writeFileSync(join(dir, `f${f}.txt`), `file ${d}/${f}\n`);
	}
	await git(s.h.checkout, "add", "-A");
	await git(s.h.checkout, "commit", "-qm", `${FILES} files`);
	await git(s.h.checkout, "repack", "-adq");
	const base = await git(s.h.checkout, "rev-parse", "HEAD");

	startDaemon(s.h);
	await eventually("the machine online", () => s.machines.online(s.machineId));
	const page = await browsers.open();
	await signInLocallyInBrowser(page, s.machines.target.publicUrl, `/d/${s.documentId}`, "ana");
	await page.getByText("Live", { exact: true }).waitFor(WAIT);
	const form = await openStartForm(page);
	await eventually(
		"the checkout's HEAD offered",
		async () => ((await form.getByLabel("Base commit").inputValue()) === base ? true : undefined),
		30_000,
	);

	const totals: number[] = [];
	const ids: string[] = [];
	for (let i = 0; i < STARTS; i++) {
		// Clicked and watched inside the page, on the page's own clock: the time a person sees.
		const ms = await page.evaluate(
			({ text, known }) =>
				new Promise<number>((resolve) => {
					const seen = () =>
						[...document.querySelectorAll("article[data-build-id]")].some(
							(card) =>
								!known.includes(card.getAttribute("data-build-id") ?? "") &&
								[...card.querySelectorAll(".log-text")].some((line) => line.textContent?.includes(text)),
						);
					const button = [...document.querySelectorAll("button")].find(
						(b) => b.textContent === "Start build",
					);
					const t0 = performance.now();
					const observer = new MutationObserver(() => {
						if (!seen()) return;
						observer.disconnect();
						resolve(performance.now() - t0);
					});
					observer.observe(document.body, { subtree: true, childList: true, characterData: true });
					button?.click();
				}),
			{ text: FIRST_UPDATE, known: ids },
		);
		const id = (await page.locator("article[data-build-id]").first().getAttribute("data-build-id"))!;
		ids.push(id);
		totals.push(ms);
		console.log(`start ${i + 1}: ${ms.toFixed(0)} ms (${id})`);
		await s.act(id, "stop");
		await s.until(id, "stopped");
	}

	// Where the time went, from the daemon's log (its clock), per run.
	const log = readLog(s.h.paths.logFile);
	const at = (run: string, msg: RegExp) => {
		const line = log.find((l) => l.run === run && msg.test(String(l.msg)));
		return line ? Date.parse(String(line.time)) : undefined;
	};
	const workspace: number[] = [];
	for (const id of ids) {
		const claimed = at(id, /^starting the build/);
		const agent = at(id, /^started the agent/);
		if (claimed !== undefined && agent !== undefined) workspace.push(agent - claimed);
	}
	console.log("");
	console.log(`checkout: ${FILES} files; sandbox and containment as the daemon chose them (see its log)`);
	console.log(`median click -> first update on the page: ${median(totals).toFixed(0)} ms (target < 2000 ms)`);
	console.log(`median claim -> agent started (workspace, sandbox): ${median(workspace).toFixed(0)} ms`);
	console.log(
		`min ${Math.min(...totals).toFixed(0)} ms, max ${Math.max(...totals).toFixed(0)} ms over ${STARTS} starts`,
	);
} finally {
	await browsers.close();
	await killCliProcesses();
	await s.close();
}
