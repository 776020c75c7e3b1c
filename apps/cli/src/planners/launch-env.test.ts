import { describe, expect, test } from "bun:test";
import { launchEnvironment } from "./launch-env";

const facts = {
	url: "http://127.0.0.1:3000",
	document: "abcdefghijkm",
	token: `chopin_p_${"a".repeat(43)}`,
	tokenFile: "/s/tokens/abcdefghijkm/planner-token",
	checkout: "/src/score",
	worktree: "/s/planners/octo/score/abcdefghijkm",
};

describe("launchEnvironment", () => {
	test("the connector's environment, --env values over it, and the table's variables", () => {
		const env = launchEnvironment(
			{ PATH: "/usr/bin", HOME: "/home/ana", SHARED: "base", CHOPIN_STATE_DIR: "/s", UNSET: undefined },
			{ SHARED: "mine", API_KEY: "k" },
			facts,
		);
		expect(env).toEqual({
			PATH: "/usr/bin",
			HOME: "/home/ana",
			SHARED: "mine",
			API_KEY: "k",
			CHOPIN_URL: facts.url,
			CHOPIN_DOCUMENT: facts.document,
			CHOPIN_PLANNER_TOKEN: facts.token,
			CHOPIN_PLANNER_TOKEN_FILE: facts.tokenFile,
			CHOPIN_CHECKOUT: facts.checkout,
			CHOPIN_WORKTREE: facts.worktree,
		});
	});

	test("the GitHub token's three variables when Chopin gives one", () => {
		const env = launchEnvironment(
			{},
			{},
			{
				...facts,
				github: { token: "ghu_x", expiresAt: Date.UTC(2026, 0, 1, 8), file: "/s/tokens/d/github-token" },
			},
		);
		expect(env.CHOPIN_GITHUB_TOKEN).toBe("ghu_x");
		expect(env.CHOPIN_GITHUB_TOKEN_EXPIRES_AT).toBe("2026-01-01T08:00:00.000Z");
		expect(env.CHOPIN_GITHUB_TOKEN_FILE).toBe("/s/tokens/d/github-token");
	});
});
