// Headless Chromium for the page tests: the launch flags, the skip rule (no Chromium: skipped with a note, unless
// CHOPIN_TEST_REQUIRE_ALL=1), a fresh profile per browser, and the page errors each browser saw.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { REQUIRE_ALL } from "../store/testing";

export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
	"--no-sandbox",
	"--headless",
	"--disable-gpu",
	"--disable-background-networking",
	"--disable-quic",
	"--no-first-run",
	"--disable-component-update",
	"--disable-sync",
];

/** Bounds a wait that should succeed; the tests never wait for a duration. */
export const WAIT = { timeout: 30_000 };

/** True when the browser tests must be skipped; throws when they may not be. Call once at a file's top. */
export function chromiumMissing(): boolean {
	const missing = !existsSync(CHROMIUM);
	if (missing && REQUIRE_ALL)
		throw new Error(`${CHROMIUM} is missing, and CHOPIN_TEST_REQUIRE_ALL=1 requires it.`);
	if (missing)
		console.warn(
			`note: browser tests are skipped: ${CHROMIUM} is missing. CHOPIN_TEST_REQUIRE_ALL=1 makes this a failure.`,
		);
	return missing;
}

/** A Cookie header (CookieJar.header()) as the cookies a browser context takes for `url`. */
export function browserCookies(header: string, url: string): { name: string; value: string; url: string }[] {
	return header
		.split("; ")
		.filter(Boolean)
		.map((pair) => {
			const at = pair.indexOf("=");
			return { name: pair.slice(0, at), value: pair.slice(at + 1), url };
		});
}

/** Browsers a test file opened, closed together; `errors` holds every page's script errors. */
export class Browsers {
	readonly errors: string[] = [];
	readonly contexts: BrowserContext[] = [];
	readonly #dirs: string[] = [];

	/** A browser of its own, on a fresh profile, whose page records its script errors. */
	async open(): Promise<Page> {
		const dir = mkdtempSync(join(tmpdir(), "chopin-chromium-"));
		this.#dirs.push(dir);
		const context = await chromium.launchPersistentContext(dir, {
			executablePath: CHROMIUM,
			args: CHROMIUM_ARGS,
			headless: true,
		});
		this.contexts.push(context);
		const page = context.pages()[0] ?? (await context.newPage());
		page.on("pageerror", (error) => this.errors.push(error.message));
		page.on("console", (m) => {
			const text = m.text();
			// mermaid measures text in a scratch element whose inline styles the page policy refuses; the
			// diagram itself is drawn as an image with its own styles (docs/server.md, Pages).
			const mermaidScratch = text.startsWith("Applying inline style violates");
			// A refused request (a 4xx the page handles) is logged by Chromium as a failed resource.
			if (m.type() === "error" && !text.includes("Failed to load resource") && !mermaidScratch)
				this.errors.push(text);
		});
		return page;
	}

	async close(): Promise<void> {
		for (const context of this.contexts.splice(0)) await context.close();
		for (const dir of this.#dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
	}
}

/** Opens a page that needs a sign-in and signs in locally as `account` (the radio's name), landing back on it. */
export async function signInLocallyInBrowser(
	page: Page,
	publicUrl: string,
	path: string,
	account: string,
): Promise<void> {
	await page.goto(new URL(path, publicUrl).href);
	await page.waitForURL(/\/sign-in\?next=/, WAIT);
	await page.getByRole("radio", { name: account }).check();
	await page.getByRole("button", { name: "Sign in" }).click();
	await page.waitForURL(new URL(path, publicUrl).href, WAIT);
}

/** How far the page is wider than the window (0 or less: nothing scrolls sideways). */
export function sidewaysOverflow(page: Page): Promise<number> {
	return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}
