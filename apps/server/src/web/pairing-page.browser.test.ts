// The pairing page in headless Chromium: a pairing started through the API as the CLI starts it, opened from its
// link by a signed-in person who types the code and selects Connect, then claimed by the "terminal"; wrong codes,
// rate limits, expiry and unknown links; and GitHub mode, where Connect goes through the emulator's authorize page.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "@chopin/agent-link/clock";
import { pairingStartedSchema } from "@chopin/agent-link/machine";
import type { Page } from "playwright-core";
import { PAIRING_TTL_MS } from "../machines/pairings";
import { createTestStore, type TestStore } from "../store/testing";
import { type ApiServer, startApiServer } from "../testing/api-server";
import {
	Browsers,
	chromiumMissing,
	sidewaysOverflow,
	signInLocallyInBrowser,
	WAIT,
} from "../testing/browser";
import { type GitHubEmulator, startGitHubEmulator } from "../testing/github-emulator";
import { testFixture } from "../testing/github-emulator-test-kit";
import { cliRequest, type Target, TEST_CLIENT } from "../testing/machines";
import { startTestServer, type TestServer } from "../testing/server";

const missing = chromiumMissing();

const CODE_LABEL = "Type the code shown in your terminal";
const AUTO_RUN_LABEL = "Let Chopin build and prototype automatically on this machine";

/** POST /api/connector/pairings over real HTTP, with the Chopin-Client header, as `chopin connect` does. */
async function startPairing(cli: Target, label: string, repository: string) {
	const res = await cliRequest(cli, "POST", "/api/connector/pairings", {
		body: {
			label,
			checkouts: [{ path: `/home/dev/src/${repository.split("/")[1]}`, repository, branch: "main" }],
			client: TEST_CLIENT,
		},
	});
	expect(res.status).toBe(201);
	const started = pairingStartedSchema.parse(await res.json());
	return { ...started, path: new URL(started.link).pathname };
}

const claim = async (cli: Target, id: string, secret: string) => {
	const res = await cliRequest(cli, "POST", `/api/connector/pairings/${id}/claim`, { body: { secret } });
	return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** A code of the right form that is not this one. */
const wrongCode = (code: string) => `${code[0] === "A" ? "B" : "A"}${code.slice(1)}`;

/** Clicks Connect and waits for the confirm's answer. */
async function connect(page: Page): Promise<number> {
	const [res] = await Promise.all([
		page.waitForResponse((r) => r.url().endsWith("/confirm"), WAIT),
		page.getByRole("button", { name: "Connect" }).click(),
	]);
	return res.status();
}

describe.skipIf(missing)("the pairing page, local mode", () => {
	let store: TestStore;
	let api: ApiServer;
	let cli: Target;
	const browsers = new Browsers();

	beforeAll(async () => {
		store = await createTestStore("sqlite");
		api = await startApiServer(store.store);
		cli = { fetch: (req) => fetch(req), publicUrl: api.server.url };
	});
	afterAll(async () => {
		await browsers.close();
		await api?.stop();
		await store?.close();
	});

	test("the whole pairing: the link, the machine and its checkouts, the code, autoRun, Connect, then the claim once", async () => {
		const started = await startPairing(cli, "alice's laptop", "acme/app");
		expect(started.link).toBe(`${api.server.publicUrl}/pair/${started.id}`);
		const page = await browsers.open();
		await signInLocallyInBrowser(page, api.server.publicUrl, started.path, "Alice (alice)");

		await page.getByRole("heading", { level: 1, name: "Connect alice's laptop to Chopin" }).waitFor(WAIT);
		const checkouts = page.locator(".checkouts li");
		expect(await checkouts.allTextContents()).toEqual(["acme/app /home/dev/src/app on main"]);
		await page.getByText("chopin 0.2.0 on linux-x64, installed with npm").waitFor(WAIT);
		// The page never shows the code: the person types what the terminal printed.
		expect(await page.locator("body").textContent()).not.toContain(started.code);
		expect((await claim(cli, started.id, started.secret)).body.status).toBe("pending");

		// Typed as a person might: lower case. The page sends the server's form.
		await page.getByLabel(CODE_LABEL).fill(started.code.toLowerCase());
		await page.getByLabel(AUTO_RUN_LABEL).check();
		expect(await connect(page)).toBe(200);
		await page
			.getByText("alice's laptop is connected. You can close this tab; the terminal continues.")
			.waitFor(WAIT);
		expect(await page.locator("[data-pairing-state]").getAttribute("data-pairing-state")).toBe("confirmed");

		// The terminal's next poll gets the credential, exactly once.
		const claimed = await claim(cli, started.id, started.secret);
		expect(claimed.status).toBe(200);
		expect(claimed.body).toMatchObject({
			status: "claimed",
			machine: { label: "alice's laptop", owner: "alice" },
		});
		expect(String(claimed.body.credential)).toMatch(/^chopin_m_[A-Za-z0-9_-]{43}$/);
		expect(await claim(cli, started.id, started.secret)).toMatchObject({
			status: 409,
			body: { code: "pairing-claimed" },
		});
		const info = await cliRequest(cli, "GET", "/api/connector/machine", {
			credential: String(claimed.body.credential),
		});
		expect(await info.json()).toMatchObject({
			machine: { owner: "alice", autoRun: true, repositories: ["acme/app"] },
		});

		// The page notices the claim by itself, and a reload shows the same.
		await page.locator('[data-claimed="true"]').waitFor(WAIT);
		await page.reload();
		await page.getByText("The terminal has picked up the machine's credential.").waitFor(WAIT);
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("a wrong code says so at the field; five in a row are rate-limited, with the time to try again", async () => {
		const started = await startPairing(cli, "bob's laptop", "acme/app");
		const page = await browsers.open();
		await signInLocallyInBrowser(page, api.server.publicUrl, started.path, "Bob (bob)");
		const field = page.getByLabel(CODE_LABEL);

		// Not a code at all: refused on the page, nothing sent.
		await field.fill("abc");
		await page.getByRole("button", { name: "Connect" }).click();
		await page.getByText("The code has eight letters and digits, like ABCD-2345").waitFor(WAIT);

		for (let i = 0; i < 5; i++) {
			await field.fill(wrongCode(started.code));
			expect(await connect(page)).toBe(400);
			await page
				.getByText("The confirmation code does not match the one this pairing printed.")
				.waitFor(WAIT);
			expect(await field.getAttribute("aria-invalid")).toBe("true");
		}
		await field.fill(wrongCode(started.code));
		expect(await connect(page)).toBe(429);
		const alert = page.getByText(/^Too many wrong codes\. Wait 60 seconds and try again \(at .+\)\.$/);
		await alert.waitFor(WAIT);
		expect(await page.getByRole("button", { name: "Connect" }).isDisabled()).toBe(true);
		// Nothing was confirmed.
		expect((await claim(cli, started.id, started.secret)).body.status).toBe("pending");
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("someone without push access is told so; an unknown link says there is no such pairing", async () => {
		const started = await startPairing(cli, "dave's laptop", "acme/app");
		const page = await browsers.open();
		await signInLocallyInBrowser(page, api.server.publicUrl, started.path, "dave");
		await page.getByLabel(CODE_LABEL).fill(started.code);
		expect(await connect(page)).toBe(403);
		await page.getByText("dave cannot push to acme/app, so cannot connect this machine.").waitFor(WAIT);

		await page.goto(new URL("/pair/prg_aaaaaaaaaaaaaaaa", api.server.publicUrl).href);
		await page.getByRole("heading", { level: 1, name: "There is no such pairing" }).waitFor(WAIT);
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("from the keyboard alone, at phone width", async () => {
		const started = await startPairing(cli, "bob's phone-sized test", "acme/app");
		const page = browsers.contexts[1]!.pages()[0]!;
		await page.setViewportSize({ width: 375, height: 740 });
		await page.goto(new URL(started.path, api.server.publicUrl).href);
		await page.getByLabel(CODE_LABEL).waitFor(WAIT);
		expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
		// Tab reaches the code field from the top of the page.
		for (let i = 0; i < 15; i++) {
			await page.keyboard.press("Tab");
			if (await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name === "code"))
				break;
		}
		await page.keyboard.type(started.code);
		await page.keyboard.press("Tab");
		await page.keyboard.press("Space");
		expect(await page.getByLabel(AUTO_RUN_LABEL).isChecked()).toBe(true);
		await page.keyboard.press("Tab");
		await page.keyboard.press("Enter");
		await page.getByText("bob's phone-sized test is connected.", { exact: false }).waitFor(WAIT);
		expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("an expired pairing shows the expired state, both when opened and when Connect comes too late", async () => {
		const late = await startPairing(cli, "alice's late laptop", "acme/app");
		const page = browsers.contexts[0]!.pages()[0]!;
		await page.goto(new URL(late.path, api.server.publicUrl).href);
		await page.getByLabel(CODE_LABEL).fill(late.code);
		await api.clock.advance(PAIRING_TTL_MS);
		expect(await connect(page)).toBe(410);
		await page.getByRole("heading", { level: 1, name: "This pairing expired" }).waitFor(WAIT);
		expect(await claim(cli, late.id, late.secret)).toMatchObject({
			status: 410,
			body: { code: "pairing-expired" },
		});

		const stale = await startPairing(cli, "alice's stale laptop", "acme/app");
		await api.clock.advance(PAIRING_TTL_MS);
		await page.goto(new URL(stale.path, api.server.publicUrl).href);
		await page.getByRole("heading", { level: 1, name: "This pairing expired" }).waitFor(WAIT);
		await page.getByText("Run chopin connect again in your terminal for a new link and code.").waitFor(WAIT);
		expect(browsers.errors).toEqual([]);
	}, 60_000);
});

describe.skipIf(missing)("the pairing page, GitHub mode", () => {
	let clock: ManualClock;
	let gh: GitHubEmulator;
	let server: TestServer;
	let cli: Target;
	const browsers = new Browsers();

	beforeAll(async () => {
		clock = new ManualClock();
		const fixture = testFixture();
		// The server's port is known only once it listens: let the app accept any callback address.
		delete fixture.apps[0]!.redirectUri;
		gh = await startGitHubEmulator({ fixture, clock });
		server = await startTestServer({ clock, env: { ...gh.env() } });
		cli = { fetch: (req) => fetch(req), publicUrl: server.url };
	});
	afterAll(async () => {
		await browsers.close();
		await server?.close();
		gh?.verify();
		await gh?.stop();
	});

	test("Connect follows the server's location through GitHub's authorize page and back, and the claim succeeds", async () => {
		const started = await startPairing(cli, "hubot's laptop", "score-team/score");
		const publicUrl = server.context.config.publicUrl;
		const page = await browsers.open();
		// Signing in: the server sends the browser to GitHub (the emulator), which lists its accounts.
		await page.goto(new URL(started.path, publicUrl).href);
		await page.getByRole("button", { name: "Sign in as hubot (Hubot)" }).click();
		await page.waitForURL(new URL(started.path, publicUrl).href, WAIT);
		await page.getByRole("heading", { level: 1, name: "Connect hubot's laptop to Chopin" }).waitFor(WAIT);

		const tokenCalls = gh.requests({ path: "/login/oauth/access_token" }).length;
		await page.getByLabel(CODE_LABEL).fill(started.code);
		expect(await connect(page)).toBe(200);
		// /auth/github/start → the emulator's authorize (login= picks hubot) → the callback → back here.
		await page
			.getByText("hubot's laptop is connected. You can close this tab; the terminal continues.")
			.waitFor(WAIT);
		expect(new URL(page.url()).pathname).toBe(started.path);
		expect(gh.requests({ path: "/login/oauth/authorize" }).at(-1)?.query.login).toBe("hubot");
		// The machine's own grant: one more code exchange than the sign-in's.
		expect(gh.requests({ path: "/login/oauth/access_token" }).length).toBe(tokenCalls + 1);

		const claimed = await claim(cli, started.id, started.secret);
		expect(claimed).toMatchObject({ status: 200, body: { status: "claimed", machine: { owner: "hubot" } } });
		const token = await cliRequest(cli, "GET", "/api/connector/github-token", {
			credential: String(claimed.body.credential),
		});
		expect(token.status).toBe(200);
		expect(browsers.errors).toEqual([]);
	}, 60_000);
});
