import { describe, expect, test } from "bun:test";
import { inspect } from "node:util";
import { ConfigError, type Env, loadConfig, parseSecretKey } from "./config";

const CWD = "/srv/chopin";
const load = (env: Env) => loadConfig(env, { cwd: CWD });

/** The ConfigError that env causes; fails the test when there is none. */
function refusal(env: Env): ConfigError {
	try {
		load(env);
	} catch (error) {
		if (error instanceof ConfigError) return error;
		throw error;
	}
	throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

function expectRefused(env: Env, variable: string, message?: string | RegExp) {
	const error = refusal(env);
	expect(error.variable).toBe(variable);
	expect(error.code).toBe("config-invalid");
	expect(error.message).not.toContain("\n");
	expect(error.message.startsWith(variable) || error.message.includes(variable)).toBe(true);
	if (message) expect(error.message).toMatch(message);
	return error;
}

const HEX_KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

describe("defaults", () => {
	test("an empty environment is a local demo server on 127.0.0.1:3000 with SQLite in .data", () => {
		const config = load({});
		expect(config.port).toBe(3000);
		expect(config.host).toBe("127.0.0.1");
		expect(config.publicUrl).toBe("http://localhost:3000");
		expect(config.dataDir).toBe("/srv/chopin/.data");
		expect(config.database).toEqual({ kind: "sqlite", path: "/srv/chopin/.data/chopin.db" });
		expect(config.authMode).toBe("local");
		expect(config.localAccounts).toEqual({
			users: [{ login: "demo", name: "Demo" }],
			repositories: { "demo/score": { demo: "admin" } },
			organizations: {},
		});
		expect(config.github).toEqual({
			url: "https://github.com",
			apiUrl: "https://api.github.com",
			clientId: undefined,
			clientSecret: undefined,
		});
		expect(config.admit).toEqual({ logins: [], organizations: [] });
		expect(config.agent).toBe(true);
		expect(config.harness).toBe("remote");
		expect(config.model).toBeUndefined();
		expect(config.agentConnection).toEqual({ pingMs: 15_000, timeoutMs: 120_000, maxSilenceMs: 900_000 });
		expect(config.plannerAttachGraceMs).toBe(120_000);
		expect(config.handoverPlannerWindowMs).toBe(10_000);
		expect(config.secretKey).toBeUndefined();
		expect(config.maxStoredImageBytes).toBe(10 * 1024 * 1024);
		expect(config.maxBodyBytes).toBe(4 * 1024 * 1024);
		expect(config.logLevel).toBe("info");
		expect(config.demo).toBe(true);
	});

	test("empty and blank values count as unset", () => {
		expect(load({ PORT: "", HOST: "  ", AUTH_MODE: "" })).toMatchObject({
			port: 3000,
			host: "127.0.0.1",
			authMode: "local",
		});
	});

	test("PUBLIC_URL follows PORT when unset", () => {
		expect(load({ PORT: "8080" }).publicUrl).toBe("http://localhost:8080");
		expect(load({ PORT: "0" }).publicUrl).toBe("http://localhost:0");
	});
});

describe("PORT and HOST", () => {
	test("PORT is an integer from 0 to 65535", () => {
		expect(refusal({ PORT: "abc" }).message).toBe('PORT must be an integer from 0 to 65535 (got "abc").');
		expectRefused({ PORT: "65536" }, "PORT");
		expectRefused({ PORT: "-1" }, "PORT");
		expectRefused({ PORT: "80.5" }, "PORT");
		expectRefused({ PORT: "1e3" }, "PORT");
		expect(load({ PORT: " 65535 " }).port).toBe(65535);
	});

	test("HOST is a host name or an address", () => {
		expect(load({ HOST: "0.0.0.0" }).host).toBe("0.0.0.0");
		expect(load({ HOST: "::1" }).host).toBe("::1");
		expect(load({ HOST: "chopin.internal" }).host).toBe("chopin.internal");
		expectRefused({ HOST: "a b" }, "HOST");
		expectRefused({ HOST: "http://x" }, "HOST");
	});

	test("a long or multi-line value is shown cut and on one line", () => {
		const error = refusal({ PORT: `${"9".repeat(100)}\nX` });
		expect(error.message).not.toContain("\n");
		expect(error.message.length).toBeLessThan(160);
	});
});

describe("PUBLIC_URL", () => {
	test("is an http(s) origin; a trailing slash is dropped", () => {
		expect(load({ PUBLIC_URL: "https://chopin.example/" }).publicUrl).toBe("https://chopin.example");
		expect(load({ PUBLIC_URL: "http://localhost:8080" }).publicUrl).toBe("http://localhost:8080");
		expect(load({ PUBLIC_URL: "HTTPS://Chopin.Example:443" }).publicUrl).toBe("https://chopin.example");
	});

	test("refuses paths, queries, other schemes, credentials and non-URLs", () => {
		expectRefused({ PUBLIC_URL: "https://chopin.example/app" }, "PUBLIC_URL", /without a path/);
		expectRefused({ PUBLIC_URL: "https://chopin.example/?x=1" }, "PUBLIC_URL");
		expectRefused({ PUBLIC_URL: "https://chopin.example#x" }, "PUBLIC_URL");
		expectRefused({ PUBLIC_URL: "ftp://chopin.example" }, "PUBLIC_URL");
		expectRefused({ PUBLIC_URL: "https://u:p@chopin.example" }, "PUBLIC_URL");
		expectRefused({ PUBLIC_URL: "chopin.example" }, "PUBLIC_URL");
	});
});

describe("DATA_DIR and DATABASE_URL", () => {
	test("DATA_DIR resolves against the working directory", () => {
		expect(load({ DATA_DIR: "state" }).dataDir).toBe("/srv/chopin/state");
		expect(load({ DATA_DIR: "/var/lib/chopin" }).database).toEqual({
			kind: "sqlite",
			path: "/var/lib/chopin/chopin.db",
		});
	});

	test("DATABASE_URL selects PostgreSQL and is kept secret", () => {
		const config = load({ DATABASE_URL: "postgresql://chopin:hunter2@db:5432/chopin" });
		expect(config.database.kind).toBe("postgres");
		if (config.database.kind !== "postgres") throw new Error("unreachable");
		expect(config.database.url.reveal()).toBe("postgresql://chopin:hunter2@db:5432/chopin");
		expect(JSON.stringify(config)).not.toContain("hunter2");
		expect(inspect(config)).not.toContain("hunter2");
		expect(load({ DATABASE_URL: "postgres://db/chopin" }).database.kind).toBe("postgres");
	});

	test("DATABASE_URL must be postgres, and a wrong one is not echoed", () => {
		const error = expectRefused(
			{ DATABASE_URL: "mysql://root:hunter2@db/chopin" },
			"DATABASE_URL",
			/a mysql: URL/,
		);
		expect(error.message).not.toContain("hunter2");
		expectRefused({ DATABASE_URL: "sqlite:///tmp/x.db" }, "DATABASE_URL");
		expectRefused({ DATABASE_URL: "not a url" }, "DATABASE_URL", /no URL/);
	});
});

describe("AUTH_MODE and accounts", () => {
	test("AUTH_MODE is local or github", () => {
		expectRefused({ AUTH_MODE: "ldap" }, "AUTH_MODE", /one of local, github/);
	});

	test("github mode needs the client id and secret, and never prints the secret", () => {
		expectRefused({ AUTH_MODE: "github" }, "GITHUB_CLIENT_ID");
		expectRefused({ AUTH_MODE: "github", GITHUB_CLIENT_ID: "Iv1.abc" }, "GITHUB_CLIENT_SECRET");
		const config = load({
			AUTH_MODE: "github",
			GITHUB_CLIENT_ID: "Iv1.abc",
			GITHUB_CLIENT_SECRET: "s3cr3t-value",
		});
		expect(config.github.clientId).toBe("Iv1.abc");
		expect(config.github.clientSecret?.reveal()).toBe("s3cr3t-value");
		expect(JSON.stringify(config)).not.toContain("s3cr3t-value");
		expect(inspect(config, { depth: 10 })).not.toContain("s3cr3t-value");
		expect(config.localAccounts).toBeUndefined();
		expect(config.demo).toBe(false);
	});

	test("github mode refuses LOCAL_ACCOUNTS and DEMO=on", () => {
		const github = { AUTH_MODE: "github", GITHUB_CLIENT_ID: "id", GITHUB_CLIENT_SECRET: "secret" };
		expectRefused(
			{ ...github, LOCAL_ACCOUNTS: '{"users":[{"login":"a"}],"repositories":{}}' },
			"LOCAL_ACCOUNTS",
		);
		expectRefused({ ...github, DEMO: "on" }, "DEMO");
		expect(load({ ...github, DEMO: "off" }).demo).toBe(false);
	});

	test("GITHUB_URL and GITHUB_API_URL are http(s) URLs; a path is allowed (GitHub Enterprise)", () => {
		const config = load({
			GITHUB_URL: "http://127.0.0.1:9999/",
			GITHUB_API_URL: "https://ghe.example/api/v3/",
		});
		expect(config.github.url).toBe("http://127.0.0.1:9999");
		expect(config.github.apiUrl).toBe("https://ghe.example/api/v3");
		expectRefused({ GITHUB_API_URL: "ghe.example" }, "GITHUB_API_URL");
		expectRefused({ GITHUB_URL: "ws://x" }, "GITHUB_URL");
	});

	test("LOCAL_ACCOUNTS is parsed and checked", () => {
		const accounts = {
			users: [{ login: "alice", name: "Alice", password: "pw-alice" }, { login: "bob" }],
			repositories: { "acme/app": { alice: "admin", bob: "read" } },
			organizations: { acme: ["alice"] },
		};
		const config = load({ LOCAL_ACCOUNTS: JSON.stringify(accounts) });
		expect(config.localAccounts?.users.map((u) => u.login)).toEqual(["alice", "bob"]);
		expect(config.localAccounts?.users[0]?.password?.reveal()).toBe("pw-alice");
		expect(JSON.stringify(config)).not.toContain("pw-alice");
		expect(config.localAccounts?.repositories["acme/app"]).toEqual({ alice: "admin", bob: "read" });
		expect(config.localAccounts?.organizations).toEqual({ acme: ["alice"] });
	});

	test("LOCAL_ACCOUNTS errors name the variable and the place", () => {
		expectRefused({ LOCAL_ACCOUNTS: "{nope" }, "LOCAL_ACCOUNTS", /must be JSON/);
		expectRefused(
			{ LOCAL_ACCOUNTS: '{"users":[],"repositories":{}}' },
			"LOCAL_ACCOUNTS",
			/users: must list at least one user/,
		);
		expectRefused(
			{ LOCAL_ACCOUNTS: '{"users":[{"login":"a b"}],"repositories":{}}' },
			"LOCAL_ACCOUNTS",
			/users\[0\]\.login/,
		);
		expectRefused(
			{ LOCAL_ACCOUNTS: '{"users":[{"login":"a"},{"login":"A"}],"repositories":{}}' },
			"LOCAL_ACCOUNTS",
			/users\[1\]\.login: the same login is listed twice/,
		);
		expectRefused(
			{ LOCAL_ACCOUNTS: '{"users":[{"login":"a"}],"repositories":{"acme/app":{"b":"admin"}}}' },
			"LOCAL_ACCOUNTS",
			/repositories\["acme\/app"\]\.b: not a login listed in users/,
		);
		expectRefused(
			{ LOCAL_ACCOUNTS: '{"users":[{"login":"a"}],"repositories":{"acme/app":{"a":"owner"}}}' },
			"LOCAL_ACCOUNTS",
			/acme\/app/,
		);
		expectRefused(
			{ LOCAL_ACCOUNTS: '{"users":[{"login":"a"}],"repositories":{"noslash":{}}}' },
			"LOCAL_ACCOUNTS",
			/repositories\.noslash: must be owner\/name/,
		);
		expectRefused(
			{ LOCAL_ACCOUNTS: '{"users":[{"login":"a"}],"repositories":{},"extra":1}' },
			"LOCAL_ACCOUNTS",
			/unrecognized key: "extra"/,
		);
		expectRefused(
			{ LOCAL_ACCOUNTS: '{"users":[{"login":"a"}],"repositories":{},"organizations":{"acme":["zed"]}}' },
			"LOCAL_ACCOUNTS",
			/organizations\.acme\[0\]: not a login listed in users/,
		);
		// A file reference must have been read first (main does it with readEnvFiles).
		expectRefused({ LOCAL_ACCOUNTS: "@/etc/accounts.json" }, "LOCAL_ACCOUNTS", /not read/);
	});

	test("LOCAL_ACCOUNTS users may have a passwordHash (not with password) and a development token", () => {
		const config = load({
			LOCAL_ACCOUNTS: JSON.stringify({
				users: [
					{ login: "a", passwordHash: "$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA" },
					{ login: "b", token: "b-dev-token-0123456789" },
				],
				repositories: {},
			}),
		});
		expect(config.localAccounts?.users[0]?.passwordHash?.reveal()).toStartWith("$argon2id$");
		expect(config.localAccounts?.users[1]?.token?.reveal()).toBe("b-dev-token-0123456789");
		expect(JSON.stringify(config)).not.toContain("b-dev-token");
		const user = (u: object) => JSON.stringify({ users: [{ login: "a", ...u }], repositories: {} });
		expectRefused({ LOCAL_ACCOUNTS: user({ passwordHash: "plain" }) }, "LOCAL_ACCOUNTS", /argon2 or bcrypt/);
		expectRefused(
			{ LOCAL_ACCOUNTS: user({ password: "x", passwordHash: "$2b$10$abcdefghijklmnopqrstuv" }) },
			"LOCAL_ACCOUNTS",
			/not both/,
		);
		expectRefused({ LOCAL_ACCOUNTS: user({ token: "short" }) }, "LOCAL_ACCOUNTS", /at least 16/);
		expectRefused(
			{ LOCAL_ACCOUNTS: user({ token: "has a space in it ok" }) },
			"LOCAL_ACCOUNTS",
			/without spaces/,
		);
		const twice = JSON.stringify({
			users: [
				{ login: "a", token: "same-token-0123456789" },
				{ login: "b", token: "same-token-0123456789" },
			],
			repositories: {},
		});
		const error = expectRefused(
			{ LOCAL_ACCOUNTS: twice },
			"LOCAL_ACCOUNTS",
			/users\[1\]\.token: another user has the same token/,
		);
		expect(error.message).not.toContain("same-token");
	});

	test("SESSION_TTL_MS defaults to 30 days and takes one minute to a year", () => {
		expect(load({}).sessionTtlMs).toBe(30 * 24 * 3_600_000);
		expect(load({ SESSION_TTL_MS: "60000" }).sessionTtlMs).toBe(60_000);
		expectRefused({ SESSION_TTL_MS: "59999" }, "SESSION_TTL_MS");
		expectRefused({ SESSION_TTL_MS: "1d" }, "SESSION_TTL_MS");
	});

	test("a password in a refused LOCAL_ACCOUNTS is never echoed", () => {
		const error = refusal({
			LOCAL_ACCOUNTS: '{"users":[{"login":"a","password":"pw-secret"}],"repositories":{},"x":1}',
		});
		expect(error.message).not.toContain("pw-secret");
	});
});

describe("ADMIT", () => {
	test("lists logins and org: entries, lower-cased; empty admits everyone", () => {
		expect(load({ ADMIT: "Alice, bob ,org:Acme,,org:octo-org" }).admit).toEqual({
			logins: ["alice", "bob"],
			organizations: ["acme", "octo-org"],
		});
		expect(load({ ADMIT: " , " }).admit).toEqual({ logins: [], organizations: [] });
	});

	test("refuses what is not a login", () => {
		expectRefused({ ADMIT: "alice,team:x" }, "ADMIT", /"team:x"/);
		expectRefused({ ADMIT: "org:" }, "ADMIT");
		expectRefused({ ADMIT: "-alice" }, "ADMIT");
	});
});

describe("TRUSTED_PROXY_HEADER and TRUSTED_PROXIES", () => {
	test("together: the header lower-cased and the proxies' addresses; neither: no proxy is trusted", () => {
		const config = load({
			TRUSTED_PROXY_HEADER: "X-Forwarded-For",
			TRUSTED_PROXIES: "10.0.0.2, ::1,::ffff:10.0.0.3",
		});
		expect(config.proxyTrust?.header).toBe("x-forwarded-for");
		expect([...(config.proxyTrust?.proxies ?? [])]).toEqual(["10.0.0.2", "::1", "10.0.0.3"]);
		expect(load({}).proxyTrust).toBeUndefined();
	});

	test("one without the other, a header that is not a name, or a proxy that is not an address is refused", () => {
		expectRefused({ TRUSTED_PROXY_HEADER: "X-Forwarded-For" }, "TRUSTED_PROXIES");
		expectRefused({ TRUSTED_PROXIES: "10.0.0.2" }, "TRUSTED_PROXY_HEADER");
		expectRefused(
			{ TRUSTED_PROXY_HEADER: "X Forwarded", TRUSTED_PROXIES: "10.0.0.2" },
			"TRUSTED_PROXY_HEADER",
		);
		expectRefused({ TRUSTED_PROXY_HEADER: "X-Real-IP", TRUSTED_PROXIES: "proxy.local" }, "TRUSTED_PROXIES");
	});
});

describe("the agent", () => {
	test("AGENT is on or off", () => {
		expect(load({ AGENT: "off" }).agent).toBe(false);
		expect(load({ AGENT: "ON" }).agent).toBe(true);
		expect(load({ AGENT: "false" }).agent).toBe(false);
		expectRefused({ AGENT: "maybe" }, "AGENT", /on or off/);
	});

	test("HARNESS accepts the known adapters by name", () => {
		for (const harness of ["remote", "atomic", "copilot-sdk", "pi"] as const)
			expect(load({ HARNESS: harness }).harness).toBe(harness);
		expectRefused({ HARNESS: "openai" }, "HARNESS", /remote, atomic, copilot-sdk, pi/);
	});

	test("MODEL is an optional line of text", () => {
		expect(load({ MODEL: "gpt-5" }).model).toBe("gpt-5");
		expectRefused({ MODEL: "x".repeat(201) }, "MODEL");
	});

	test("connection timings have ranges and must fit together", () => {
		const config = load({
			AGENT_CONNECTION_PING_MS: "50",
			AGENT_CONNECTION_TIMEOUT_MS: "200",
			AGENT_CONNECTION_MAX_SILENCE_MS: "3600000",
		});
		expect(config.agentConnection).toEqual({ pingMs: 50, timeoutMs: 200, maxSilenceMs: 3_600_000 });
		expectRefused(
			{ AGENT_CONNECTION_MAX_SILENCE_MS: "3600001" },
			"AGENT_CONNECTION_MAX_SILENCE_MS",
			/1 to 3600000/,
		);
		expectRefused({ AGENT_CONNECTION_PING_MS: "0" }, "AGENT_CONNECTION_PING_MS");
		expectRefused({ AGENT_CONNECTION_PING_MS: "120000" }, "AGENT_CONNECTION_TIMEOUT_MS", /greater than/);
		expectRefused(
			{ AGENT_CONNECTION_MAX_SILENCE_MS: "60000" },
			"AGENT_CONNECTION_MAX_SILENCE_MS",
			/at least/,
		);
	});

	test("PLANNER_ATTACH_GRACE_MS is 0..3600000 and HANDOVER_PLANNER_WINDOW_MS is a duration", () => {
		expect(load({ PLANNER_ATTACH_GRACE_MS: "0" }).plannerAttachGraceMs).toBe(0);
		expect(load({ PLANNER_ATTACH_GRACE_MS: "3600000" }).plannerAttachGraceMs).toBe(3_600_000);
		expectRefused({ PLANNER_ATTACH_GRACE_MS: "3600001" }, "PLANNER_ATTACH_GRACE_MS", /0 to 3600000/);
		expect(load({ HANDOVER_PLANNER_WINDOW_MS: "250" }).handoverPlannerWindowMs).toBe(250);
		expectRefused({ HANDOVER_PLANNER_WINDOW_MS: "-5" }, "HANDOVER_PLANNER_WINDOW_MS");
	});
});

describe("CHOPIN_SECRET_KEY", () => {
	test("takes 64 hex characters or base64 of 32 bytes", () => {
		const fromHex = load({ CHOPIN_SECRET_KEY: HEX_KEY }).secretKey?.reveal();
		expect(fromHex).toEqual(Uint8Array.from(Buffer.from(HEX_KEY, "hex")));
		const b64 = Buffer.from(HEX_KEY, "hex").toString("base64");
		expect(load({ CHOPIN_SECRET_KEY: b64 }).secretKey?.reveal()).toEqual(fromHex!);
		const b64url = Buffer.from(HEX_KEY, "hex").toString("base64url");
		expect(load({ CHOPIN_SECRET_KEY: b64url }).secretKey?.reveal()).toEqual(fromHex!);
	});

	test("refuses other lengths without echoing the value", () => {
		const error = expectRefused(
			{ CHOPIN_SECRET_KEY: "deadbeef-not-a-key" },
			"CHOPIN_SECRET_KEY",
			/got 18 characters/,
		);
		expect(error.message).not.toContain("deadbeef");
		expectRefused({ CHOPIN_SECRET_KEY: HEX_KEY.slice(2) }, "CHOPIN_SECRET_KEY");
		expectRefused({ CHOPIN_SECRET_KEY: Buffer.alloc(31).toString("base64") }, "CHOPIN_SECRET_KEY");
	});

	test("parseSecretKey accepts a trailing newline, as a key file has", () => {
		expect(parseSecretKey(`${HEX_KEY}\n`)?.length).toBe(32);
		expect(parseSecretKey("zz")).toBeUndefined();
	});
});

describe("limits, logging and the demo", () => {
	test("byte limits are integers of at least 1 KiB", () => {
		expect(load({ MAX_BODY_BYTES: "1048576", MAX_STORED_IMAGE_BYTES: "2048" })).toMatchObject({
			maxBodyBytes: 1_048_576,
			maxStoredImageBytes: 2048,
		});
		expectRefused({ MAX_BODY_BYTES: "10MB" }, "MAX_BODY_BYTES");
		expectRefused({ MAX_STORED_IMAGE_BYTES: "12" }, "MAX_STORED_IMAGE_BYTES");
	});

	test("Chat's attachment caps default to the spec's 1,048,576 bytes and never exceed it under HARNESS=remote", () => {
		expect(load({}).chatAttachments).toEqual({ maxBytes: 1_048_576, maxTotalBytes: 1_048_576 });
		expect(
			load({ CHAT_ATTACHMENT_MAX_BYTES: "65536", CHAT_ATTACHMENT_MAX_TOTAL_BYTES: "262144" }).chatAttachments,
		).toEqual({ maxBytes: 65_536, maxTotalBytes: 262_144 });
		expectRefused({ CHAT_ATTACHMENT_MAX_BYTES: "1048577" }, "CHAT_ATTACHMENT_MAX_BYTES", /HARNESS=remote/);
		expectRefused(
			{ CHAT_ATTACHMENT_MAX_TOTAL_BYTES: "2097152" },
			"CHAT_ATTACHMENT_MAX_TOTAL_BYTES",
			/at most 1048576/,
		);
		expectRefused({ CHAT_ATTACHMENT_MAX_BYTES: "0" }, "CHAT_ATTACHMENT_MAX_BYTES");
		// Another harness is not bound by the agent connection's frame.
		expect(
			load({ HARNESS: "pi", CHAT_ATTACHMENT_MAX_TOTAL_BYTES: "2097152" }).chatAttachments.maxTotalBytes,
		).toBe(2_097_152);
	});

	test("LOG_LEVEL is a known level", () => {
		expect(load({ LOG_LEVEL: "debug" }).logLevel).toBe("debug");
		expect(load({ LOG_LEVEL: "silent" }).logLevel).toBe("silent");
		expectRefused({ LOG_LEVEL: "verbose" }, "LOG_LEVEL");
	});

	test("DEMO defaults on in local mode and can be turned off", () => {
		expect(load({ DEMO: "off" }).demo).toBe(false);
		expectRefused({ DEMO: "sometimes" }, "DEMO");
	});

	test("the first bad variable is the one reported", () => {
		expect(refusal({ PORT: "x", HOST: "a b" }).variable).toBe("PORT");
	});

	test("a value that is not a string is refused by name", () => {
		expectRefused({ PORT: 3000 as unknown as string }, "PORT", /must be a string/);
	});
});

describe("machines", () => {
	const github = { AUTH_MODE: "github", GITHUB_CLIENT_ID: "Iv1.x", GITHUB_CLIENT_SECRET: "s" };

	test("MIN_CLI_VERSION: unset accepts every version; a version such as 0.3.0 or 1.0.0-rc.1", () => {
		expect(load({}).machines.minCliVersion).toBeUndefined();
		expect(load({ MIN_CLI_VERSION: "0.3.0" }).machines.minCliVersion).toBe("0.3.0");
		expect(load({ MIN_CLI_VERSION: "1.0.0-rc.1" }).machines.minCliVersion).toBe("1.0.0-rc.1");
		expectRefused({ MIN_CLI_VERSION: "v1" }, "MIN_CLI_VERSION", /such as 0\.3\.0/);
		expectRefused({ MIN_CLI_VERSION: "1.2" }, "MIN_CLI_VERSION");
	});

	test("MACHINE_OFFLINE_GRACE_MS defaults to 15 minutes and takes 0 to a day", () => {
		expect(load({}).machines.offlineGraceMs).toBe(15 * 60_000);
		expect(load({ MACHINE_OFFLINE_GRACE_MS: "0" }).machines.offlineGraceMs).toBe(0);
		expect(load({ MACHINE_OFFLINE_GRACE_MS: "86400000" }).machines.offlineGraceMs).toBe(86_400_000);
		expectRefused({ MACHINE_OFFLINE_GRACE_MS: "86400001" }, "MACHINE_OFFLINE_GRACE_MS");
	});

	test("LOCAL_PLANNER_CREDENTIALS is off by default, and only for AUTH_MODE=local", () => {
		expect(load({}).machines.localPlannerCredentials).toBe(false);
		expect(load({ LOCAL_PLANNER_CREDENTIALS: "on" }).machines.localPlannerCredentials).toBe(true);
		expect(load(github).machines.localPlannerCredentials).toBe(false);
		expectRefused({ ...github, LOCAL_PLANNER_CREDENTIALS: "on" }, "LOCAL_PLANNER_CREDENTIALS");
		expectRefused({ LOCAL_PLANNER_CREDENTIALS: "yes" }, "LOCAL_PLANNER_CREDENTIALS");
	});
});
