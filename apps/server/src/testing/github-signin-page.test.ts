// The sign-in page in a real browser: Chromium opens the authorize URL, a person's click on an
// account lands on the app's callback with a code that trades for that account's token.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { type GitHubEmulator, startGitHubEmulator } from "./github-emulator";
import { CLIENT_ID, CLIENT_SECRET, testFixture } from "./github-emulator-test-kit";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
const required = process.env.CHOPIN_TEST_REQUIRE_ALL === "1";
if (!CHROMIUM && !required)
	console.warn("note: Chromium is not installed; the sign-in page browser test is skipped.");

let browser: Browser | undefined;
let app: ReturnType<typeof Bun.serve> | undefined;
let gh: GitHubEmulator | undefined;

beforeAll(async () => {
	if (!CHROMIUM) return;
	browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
});

afterAll(async () => {
	await browser?.close();
	await gh?.stop();
	await app?.stop(true);
});

test.skipIf(!CHROMIUM && !required)(
	"a person picks an account on the page and the app receives a code for it",
	async () => {
		expect(CHROMIUM).toBeDefined();
		// A stand-in for the Chopin server's callback, on its own origin as in real life.
		app = Bun.serve({
			hostname: "127.0.0.1",
			port: 0,
			fetch: () =>
				new Response("<!DOCTYPE html><title>callback</title><link rel=icon href='data:,'>ok", {
					headers: { "content-type": "text/html" },
				}),
		});
		const fixture = testFixture();
		fixture.apps[0]!.redirectUri = `http://127.0.0.1:${app.port}`;
		gh = await startGitHubEmulator({ fixture });

		const page = await browser!.newPage();
		const authorizeUrl = `${gh.url}/login/oauth/authorize?${new URLSearchParams({ client_id: CLIENT_ID, redirect_uri: `http://127.0.0.1:${app.port}/auth/callback`, state: "from-browser" })}`;
		await page.goto(authorizeUrl);
		expect(await page.title()).toBe("Sign in to GitHub (emulator)");
		await page.getByRole("button", { name: "Sign in as hubot (Hubot)" }).click();
		await page.waitForURL(/\/auth\/callback\?/);
		const landed = new URL(page.url());
		expect(landed.searchParams.get("state")).toBe("from-browser");

		const grant = (await (
			await fetch(`${gh.url}/login/oauth/access_token`, {
				method: "POST",
				headers: { accept: "application/json" },
				body: new URLSearchParams({
					client_id: CLIENT_ID,
					client_secret: CLIENT_SECRET,
					code: landed.searchParams.get("code")!,
				}),
			})
		).json()) as { access_token: string };
		const user = await fetch(`${gh.apiUrl}/user`, {
			headers: { authorization: `Bearer ${grant.access_token}` },
		});
		expect(((await user.json()) as { login: string }).login).toBe("hubot");
		await page.close();
		// The browser asked for nothing the emulator does not serve (no stray favicon request).
		gh.verify();
	},
	30_000,
);
