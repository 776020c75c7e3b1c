import { describe, expect, test } from "bun:test";
import { isSecretKey, maskCredentials } from "./masking";

const R = "[redacted]";
/**
 * Fakes of each token shape, joined at run time so no token-like literal sits in the source (secret
 * scanners would flag it); the values are what the strings below spell.
 */
const fake = (prefix: string, body: string) => `${prefix}${body}`;
const FAKE = "abcdefghijklmnopqrstuvwxyz0123456789";

describe("token shapes", () => {
	test.each([
		["GitHub personal", `ghp_${FAKE}`],
		["GitHub OAuth", `gho_${FAKE}`],
		["GitHub user-to-server", `ghu_${FAKE}`],
		["GitHub server-to-server", `ghs_${FAKE}`],
		["GitHub refresh", `ghr_${FAKE}`],
		["GitHub fine-grained", fake("github_pat_", "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz")],
		["Chopin Planner", fake("chopin_p_", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde")],
		["Chopin machine", fake("chopin_m_", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde")],
		["Slack bot", fake("xoxb-", "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx")],
		["Slack user", fake("xoxp-", "123456789012-123456789012-123456789012-abcdef")],
		["Slack app-level config", fake("xoxa-", "2-abcdef123456")],
		["Slack rotating", fake("xoxe.xoxp-", "1-Mi0yLTEyMzQ1Njc4OTAx")],
		["Slack refresh", fake("xoxe-", "1-My0xLTEyMzQ1Njc4OTAx")],
		["Slack app", fake("xapp-", "1-A0123456789-1234567890123-abcdef")],
		["GitLab", fake("glpat-", "abcdefghijKLMNOPQRST")],
		["npm", fake("npm_", "abcdefghijklmnopqrstuvwxyz0123456789")],
		["AWS access key id", fake("AKIA", "IOSFODNN7EXAMPLE")],
		["Google API key", fake("AIza", "SyA1234567890abcdefghijklmnopqrstuv")],
		["Stripe", fake("sk_live_", "abcdefghij0123456789")],
		["OpenAI", fake("sk-proj-", "abcdefghijklmnop0123456789")],
		["Anthropic", fake("sk-ant-", "api03-abcdefghijklmnop0123456789")],
		[
			"JWT",
			fake(
				"eyJ",
				"hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
			),
		],
	])("%s", (_, token) => {
		expect(maskCredentials(`failed with ${token} here`)).toBe(`failed with ${R} here`);
		expect(maskCredentials(`(${token})`)).toBe(`(${R})`);
	});

	test("Bearer values keep the word Bearer", () => {
		expect(maskCredentials("sent Bearer abc.DEF-123_~+/= ok")).toBe(`sent Bearer ${R} ok`);
		expect(maskCredentials("bearer xyz")).toBe(`bearer ${R}`);
		expect(maskCredentials("BEARER\txyz")).toBe(`BEARER ${R}`);
	});

	test("a PEM private key keeps only its armour lines", () => {
		const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----";
		expect(maskCredentials(`key: x\n${pem}\nafter`)).toBe(
			`key: x\n-----BEGIN RSA PRIVATE KEY-----${R}-----END RSA PRIVATE KEY-----\nafter`,
		);
		expect(maskCredentials("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn cut")).toBe(
			`-----BEGIN OPENSSH PRIVATE KEY-----${R}`,
		);
	});

	test("words that only look like a prefix stay readable", () => {
		for (const text of [
			"ghp_short",
			"highp_precision_value",
			"sk-learn-model-not-found-error",
			"xox",
			"AKIA",
			"the github_pat_ prefix",
			"chopin_p_",
		]) {
			expect(maskCredentials(text)).toBe(text);
		}
	});
});

describe("credential assignments", () => {
	test.each([
		["password=hunter2", `password=${R}`],
		["PASSWORD=hunter2", `PASSWORD=${R}`],
		["passwd: hunter2", `passwd: ${R}`],
		["pass=hunter2", `pass=${R}`],
		["db_pass=hunter2", `db_pass=${R}`],
		["PGPASSWORD=hunter2", `PGPASSWORD=${R}`],
		["pwd=hunter2", `pwd=${R}`],
		["passphrase = open sesame", `passphrase = ${R} sesame`],
		["token: abc123", `token: ${R}`],
		["GITHUB_TOKEN=abc123", `GITHUB_TOKEN=${R}`],
		["accessToken=abc123", `accessToken=${R}`],
		["refresh-token=abc123", `refresh-token=${R}`],
		["api_key=abc123", `api_key=${R}`],
		["apiKey: abc123", `apiKey: ${R}`],
		["APIKEY=abc123", `APIKEY=${R}`],
		["x-api-key: abc123", `x-api-key: ${R}`],
		["client_secret=abc123", `client_secret=${R}`],
		["AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", `AWS_SECRET_ACCESS_KEY=${R}`],
		["private_key := abc", `private_key := ${R}`],
		["credentials => abc", `credentials => ${R}`],
		["auth=abc", `auth=${R}`],
		["sessionId=abc", `sessionId=${R}`],
		["sig=abc&se=2025", `sig=${R}`],
		["spring.datasource.password=abc", `spring.datasource.password=${R}`],
	])("%s", (text, masked) => {
		expect(maskCredentials(text)).toBe(masked);
	});

	test("every proxy setting", () => {
		for (const key of [
			"http_proxy",
			"HTTP_PROXY",
			"https_proxy",
			"HTTPS_PROXY",
			"all_proxy",
			"ALL_PROXY",
			"ftp_proxy",
			"no_proxy",
			"NO_PROXY",
			"socks_proxy",
			"npm_config_https_proxy",
			"http.proxy",
			"proxy",
		]) {
			expect(maskCredentials(`${key}=http://u:p@proxy.example:8080`)).toBe(`${key}=${R}`);
			expect(maskCredentials(`${key}=http://proxy.example:3128 next`)).toBe(`${key}=${R} next`);
		}
		expect(maskCredentials("HTTPS_PROXY=http://u:p@h")).toBe(`HTTPS_PROXY=${R}`);
		expect(maskCredentials('$env:HTTPS_PROXY = "http://u:p@h"')).toBe(`$env:HTTPS_PROXY = "${R}"`);
		expect(maskCredentials("git config --global http.proxy http://h:1")).toBe(
			"git config --global http.proxy http://h:1",
		);
		expect(maskCredentials("--proxy http://h:1 rest")).toBe(`--proxy ${R} rest`);
	});

	test("quoted values keep their quotes", () => {
		expect(maskCredentials('password="hunter 2" user=bob')).toBe(`password="${R}" user=bob`);
		expect(maskCredentials("password='hunter 2'")).toBe(`password='${R}'`);
		expect(maskCredentials("password=`hunter 2`")).toBe(`password=\`${R}\``);
		expect(maskCredentials('password="hun\\"ter"')).toBe(`password="${R}"`);
		expect(maskCredentials('password="open')).toBe(`password="${R}`);
		expect(maskCredentials('password="open\nnext line')).toBe(`password="${R}\nnext line`);
	});

	test("JSON, and JSON escaped inside JSON", () => {
		expect(maskCredentials('{"password":"hunter2","user":"bob"}')).toBe(`{"password":"${R}","user":"bob"}`);
		expect(maskCredentials('{"token": 12345, "n": 1}')).toBe(`{"token": ${R} "n": 1}`);
		const nested = JSON.stringify(JSON.stringify({ password: "hunter2", user: "bob" }));
		expect(maskCredentials(nested)).toBe(`"{\\"password\\":\\"${R}\\",\\"user\\":\\"bob\\"}"`);
		expect(maskCredentials('{"credentials": {"user": "bob", "secret": "x"}}')).toBe(
			`{"credentials": {"user": "bob", "secret": "${R}"}}`,
		);
	});

	test("an unquoted value runs to whitespace or a quote, query strings included", () => {
		expect(maskCredentials("https://h/cb?access_token=abc&state=1 next")).toBe(
			`https://h/cb?access_token=${R} next`,
		);
		expect(maskCredentials('"url": "https://h/?token=abc"')).toBe(`"url": "https://h/?token=${R}"`);
		expect(maskCredentials("Server=db;Uid=sa;Pwd=s3cret;Database=x")).toBe(`Server=db;Uid=sa;Pwd=${R}`);
	});

	test("command-line flags, with = or a space", () => {
		expect(maskCredentials("tool --password hunter2 --user bob")).toBe(`tool --password ${R} --user bob`);
		expect(maskCredentials("tool --token=abc --user bob")).toBe(`tool --token=${R} --user bob`);
		expect(maskCredentials("tool -password hunter2")).toBe("tool -password hunter2");
	});

	test("HTTP headers: the scheme stays, the rest of the line is masked", () => {
		expect(maskCredentials("Authorization: Basic dXNlcjpwYXNz\nnext")).toBe(
			`Authorization: Basic ${R}\nnext`,
		);
		expect(maskCredentials("authorization: token abc123")).toBe(`authorization: token ${R}`);
		expect(maskCredentials("Authorization: Bearer abc.def")).toBe(`Authorization: Bearer ${R}`);
		expect(maskCredentials("Proxy-Authorization: Digest u=1, r=2")).toBe(`Proxy-Authorization: Digest ${R}`);
		expect(maskCredentials("Cookie: a=1; session=2  \nnext")).toBe(`Cookie: ${R}  \nnext`);
		expect(maskCredentials("Set-Cookie: sid=abc; Path=/; HttpOnly")).toBe(`Set-Cookie: ${R}`);
	});

	test("keys that are no secret, and secret words inside other words", () => {
		for (const text of [
			"bypass=true",
			"author: bob",
			"passed: 3",
			"keyboard=us",
			"key=name",
			"user=bob",
			"compass=north",
			"password is required",
			"password",
		]) {
			expect(maskCredentials(text)).toBe(text);
		}
	});

	test("isSecretKey reads camelCase, dots and dashes", () => {
		expect(isSecretKey("dbPassword")).toBe(true);
		expect(isSecretKey("APIKey")).toBe(true);
		expect(isSecretKey("x.auth.value")).toBe(true);
		expect(isSecretKey("oauth")).toBe(false);
		expect(isSecretKey("authKey")).toBe(true);
		expect(isSecretKey("authorName")).toBe(false);
		expect(isSecretKey("author")).toBe(false);
	});
});

describe("masking as a whole", () => {
	test("a message is masked as plain text, even when it holds JSON", () => {
		const message = JSON.stringify({
			url: "https://alice:hunter2@example.com/repo.git",
			password: "hunter2",
			header: "Bearer abc",
			token: `ghp_${FAKE}`,
		});
		const masked = maskCredentials(message);
		expect(masked).not.toContain("hunter2");
		expect(masked).not.toContain("ghp_");
		expect(masked).not.toContain("abc");
		expect(masked).toBe(
			`{"url":"https://${R}@example.com/repo.git","password":"${R}","header":"Bearer ${R}","token":"${R}"}`,
		);
	});

	test("a proxy URL inside an assignment is masked whole", () => {
		expect(maskCredentials("export HTTPS_PROXY=https://alice:hunter2@proxy:3128; run")).toBe(
			`export HTTPS_PROXY=${R} run`,
		);
	});

	test("masking twice changes nothing more", () => {
		const texts = [
			"https://alice:hunter2@host password=x token: ghp_abcdefghijklmnopqrstuvwxyz0123",
			"Authorization: Bearer abc\nCookie: a=b",
			'{"secret":"x","url":"//u:p@h"}',
		];
		for (const text of texts) {
			const once = maskCredentials(text);
			expect(maskCredentials(once)).toBe(once);
		}
	});

	test("text with nothing to mask is returned unchanged", () => {
		const text = "Build failed: 3 tests failed in src/app.ts:12 (see https://ci.example/run/7).";
		expect(maskCredentials(text)).toBe(text);
		expect(maskCredentials("")).toBe("");
	});

	describe("linear time on adversarial input (1 MiB each)", () => {
		const MB = 1 << 20;
		test.each([
			["token prefixes", "ghp_".repeat(MB / 4)],
			["JWT prefixes", "eyJ".repeat(MB / 3)],
			["Slack prefixes", "xoxb-".repeat(MB / 5)],
			["sk- prefixes", "sk-".repeat(MB / 3)],
			["assignments", "password=".repeat(MB / 9)],
			["open quotes", 'password="'.repeat(MB / 10)],
			["escaped quotes", `password="${`${"\\".repeat(100)}"`.repeat(MB / 101)}`],
			["a backslash value", `password:${"\\".repeat(MB)}`],
			["one long word", "a".repeat(MB)],
			["private key openings", "-----BEGIN PRIVATE KEY-----".repeat(MB / 27)],
			["Bearer words", "Bearer ".repeat(MB / 7)],
			[
				"a mix of everything",
				"https://u:p@h password=x ghp_aaaaaaaaaaaaaaaa \\u0040 %2540 &#64; ".repeat(MB / 64),
			],
		])("%s completes", (_, text) => {
			expect(typeof maskCredentials(text)).toBe("string");
		});
	});
});
