// Failure injection over real HTTP: 5xx answers, both rate-limit styles, late and held answers,
// each limited to N requests and optionally to a path prefix or method.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "../../../../packages/agent-link/src/clock";
import { type GitHubEmulator, startGitHubEmulator } from "./github-emulator";
import { EmulatorError } from "./github-emulator-errors";
import { api, authorize, CLIENT_ID, CLIENT_SECRET, PAT, testFixture } from "./github-emulator-test-kit";

let clock: ManualClock;
let gh: GitHubEmulator;

beforeEach(async () => {
	clock = new ManualClock();
	gh = await startGitHubEmulator({ fixture: testFixture(), clock });
});

afterEach(async () => {
	try {
		gh.verify();
	} finally {
		await gh.stop();
	}
});

/** Waits for a condition the emulator reaches on its own (a request arriving), not for a duration. */
async function until(condition: () => boolean): Promise<void> {
	while (!condition()) await Bun.sleep(1);
}

async function status(res: Response): Promise<number> {
	await res.arrayBuffer();
	return res.status;
}

describe("server errors", () => {
	test("the next N matching requests fail; other paths and later requests are untouched", async () => {
		gh.inject({ kind: "status", status: 502, times: 2, pathPrefix: "/api/v3/user" });
		const failed = await api(gh, "/user", PAT);
		expect(failed.status).toBe(502);
		expect(failed.headers.get("content-type")).toContain("text/html");
		await failed.text();
		expect(await status(await api(gh, "/repos/octocat/hello-world", PAT))).toBe(200);
		expect(await status(await api(gh, "/user/orgs", PAT))).toBe(502);
		expect(await status(await api(gh, "/user", PAT))).toBe(200);
		expect(gh.requests({ path: "/api/v3/user" }).map((r) => r.fault)).toEqual(["status", null]);
	});

	test("500 answers GitHub's JSON error, 503 a page; a method filter spares other methods", async () => {
		gh.inject({ kind: "status", status: 500 });
		const res = await api(gh, "/user", PAT);
		expect(res.status).toBe(500);
		expect(await res.json()).toMatchObject({ message: "Server Error" });

		gh.inject({ kind: "status", status: 503, method: "post" });
		expect(await status(await api(gh, "/user", PAT))).toBe(200);
		const token = await fetch(`${gh.url}/login/oauth/access_token`, { method: "POST" });
		expect(await status(token)).toBe(503);
	});

	test("a failed token request does not use the code up, so a retry succeeds", async () => {
		const { code } = await authorize(gh, "octocat");
		gh.inject({ kind: "status", status: 503, pathPrefix: "/login/oauth/access_token" });
		const exchange = () =>
			fetch(`${gh.url}/login/oauth/access_token`, {
				method: "POST",
				headers: { accept: "application/json" },
				body: new URLSearchParams({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, code }),
			});
		expect(await status(await exchange())).toBe(503);
		const retried = (await (await exchange()).json()) as Record<string, unknown>;
		expect(retried.access_token).toBeString();
	});

	test("an invalid fault is refused", () => {
		expect(() => gh.inject({ kind: "status", status: 404 })).toThrow(EmulatorError);
		expect(() => gh.inject({ kind: "rate-limit", style: "tertiary" } as never)).toThrow(
			"The fault is not valid",
		);
	});
});

describe("rate limits", () => {
	test("primary: 403 with x-ratelimit-remaining 0 and x-ratelimit-reset on the emulator's clock", async () => {
		gh.inject({ kind: "rate-limit", style: "primary", seconds: 120 });
		const res = await api(gh, "/user", PAT);
		expect(res.status).toBe(403);
		expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
		expect(res.headers.get("x-ratelimit-reset")).toBe(String(Math.ceil((clock.now() + 120_000) / 1000)));
		expect(res.headers.get("retry-after")).toBeNull();
		const body = (await res.json()) as { message: string; documentation_url: string };
		expect(body.message).toStartWith("API rate limit exceeded for user ID 583231.");
		expect(body.documentation_url).toContain("rate-limits");
		expect(await status(await api(gh, "/user", PAT))).toBe(200);
	});

	test("secondary: 429 with retry-after", async () => {
		gh.inject({ kind: "rate-limit", style: "secondary", seconds: 30 });
		const res = await api(gh, "/repos/score-team/score", PAT);
		expect(res.status).toBe(429);
		expect(res.headers.get("retry-after")).toBe("30");
		expect(((await res.json()) as { message: string }).message).toContain("secondary rate limit");
	});

	test("either style can use the other status", async () => {
		gh.inject({ kind: "rate-limit", style: "primary", status: 429 });
		gh.inject({ kind: "rate-limit", style: "secondary", status: 403 });
		expect(await status(await api(gh, "/user"))).toBe(429);
		const second = await api(gh, "/user");
		expect(second.status).toBe(403);
		expect(second.headers.get("retry-after")).toBe("60");
		await second.text();
	});
});

describe("slow answers", () => {
	test("a delay holds the answer until the emulator's clock has moved", async () => {
		gh.inject({ kind: "delay", ms: 30_000, pathPrefix: "/api/v3/user" });
		let answered = false;
		const pending = api(gh, "/user", PAT).then(async (res) => {
			answered = true;
			return status(res);
		});
		await until(() => clock.pending > 0);
		await clock.advance(29_999);
		expect(answered).toBe(false);
		await clock.advance(1);
		expect(await pending).toBe(200);
		expect(gh.requests({ path: "/api/v3/user" })[0]?.fault).toBe("delay");
	});

	test("a held request is answered normally once released, and the client's abort frees it", async () => {
		gh.inject({ kind: "hang", times: 2 });
		let answered = false;
		const released = api(gh, "/user", PAT).then(async (res) => {
			answered = true;
			return status(res);
		});
		await until(() => gh.held === 1);
		expect(answered).toBe(false);
		gh.releaseHeld();
		expect(await released).toBe(200);

		const abort = new AbortController();
		const given = fetch(`${gh.apiUrl}/user`, {
			headers: { authorization: `token ${PAT}` },
			signal: abort.signal,
		}).then(
			() => "answered",
			(err: Error) => err.name,
		);
		await until(() => gh.held === 1);
		abort.abort();
		expect(await given).toBe("AbortError");
		await until(() => gh.held === 0);
	});
});
