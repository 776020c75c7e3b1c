// `npm start`'s whole loop, as a person runs it: the real server, a machine paired through the real pairing flow,
// the daemon launching the example backend, one @chopin message answered; then a person on the document page in
// Chromium asks it a question and answers the Decision there; Ctrl-C then leaves no process behind.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Browsers, chromiumMissing, signInLocallyInBrowser, WAIT } from "../apps/server/src/testing/browser";

const dataDir = mkdtempSync(join(tmpdir(), "chopin-start-"));
const browsers = new Browsers();
const noBrowser = chromiumMissing();
afterAll(async () => {
	await browsers.close();
	rmSync(dataDir, { recursive: true, force: true });
});

/** Processes whose environment names the demo's data dir: the server, the daemon, the backend. */
function processesOf(dir: string): number[] {
	const found: number[] = [];
	for (const entry of readdirSync("/proc")) {
		if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
		try {
			if (readFileSync(`/proc/${entry}/environ`, "latin1").includes(dir)) found.push(Number(entry));
		} catch {
			// Gone meanwhile, or not ours to read.
		}
	}
	return found;
}

test("npm start runs the server, pairs a machine, and its example backend answers @chopin; Ctrl-C stops them all", async () => {
	const start = Bun.spawn(["bun", join(import.meta.dir, "start.ts")], {
		env: { ...process.env, DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "warn" },
		stdout: "pipe",
		stderr: "pipe",
	});
	let out = "";
	const decoder = new TextDecoder();
	const answered = (async () => {
		for await (const chunk of start.stdout) {
			out += decoder.decode(chunk, { stream: true });
			if (out.includes("Press Ctrl-C to stop")) return;
		}
	})();
	const errors = new Response(start.stderr).text();
	await Promise.race([answered, start.exited]);
	expect(out).toContain("The demo machine's Planner answered in Chat:");
	expect(out).toContain("Echo: @chopin Hello from the demo machine!");
	expect(processesOf(dataDir).length).toBeGreaterThanOrEqual(3);
	if (!noBrowser) {
		// On the document page: an @chopin message with "ask" gets the backend's question as a Decision,
		// answered in the page, and the reply that follows names the answer.
		const pagePath = /Open (http:\/\/\S+)\/d\/(\w+) and sign in/.exec(out);
		expect(pagePath).not.toBeNull();
		const [, url, documentId] = pagePath!;
		const page = await browsers.open();
		await signInLocallyInBrowser(page, url!, `/d/${documentId}`, "demo");
		await page.getByText("Live", { exact: true }).waitFor(WAIT);
		await page.getByLabel("Message").fill("@chopin ask me something");
		await page.getByRole("button", { name: "Send" }).click();
		const card = page.getByRole("region", { name: /^Decision/ });
		await card.getByText("Planner echo asks: which fruit?").waitFor(WAIT);
		await card.getByRole("radio", { name: "Pears" }).check();
		await card.getByRole("button", { name: "Answer" }).click();
		await page.locator('.message.planner[data-status="done"]', { hasText: "You chose Pears." }).waitFor(WAIT);
		expect(browsers.errors).toEqual([]);
	}
	start.kill("SIGINT");
	await start.exited;
	const stderr = await errors;
	// The daemon's and backend's output is redacted: no credential of any kind reaches it.
	expect(stderr).not.toMatch(/chopin_[pmr]_[A-Za-z0-9_-]{20}/);
	for (let i = 0; i < 100 && processesOf(dataDir).length > 0; i++) await Bun.sleep(100);
	expect(processesOf(dataDir)).toEqual([]);
}, 180_000);
