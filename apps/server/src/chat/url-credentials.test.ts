import { describe, expect, test } from "bun:test";
import { maskCredentials } from "./masking";
import { isPlainUserName, URL_CREDENTIAL_WINDOW } from "./url-credentials";

const R = "[redacted]";

describe("URL credentials: the spec's examples", () => {
	test("https://alice:hunter2@host shows as https://[redacted]@host", () => {
		expect(maskCredentials("https://alice:hunter2@host")).toBe(`https://${R}@host`);
	});

	test("a short plain user name with no password stays visible", () => {
		expect(maskCredentials("ssh://git@github.com")).toBe("ssh://git@github.com");
	});

	test("a backslash is read as a slash: https:\\\\alice:hunter2@host", () => {
		expect(maskCredentials("https:\\\\alice:hunter2@host")).toBe(`https:\\\\${R}@host`);
	});

	test("a password holding :// is masked whole", () => {
		expect(maskCredentials("https://alice:pa://ss@host/x")).toBe(`https://${R}@host/x`);
		expect(maskCredentials("https://alice:a://b://c@host")).toBe(`https://${R}@host`);
	});

	test("a later @ within the same URL, even another URL's, is masked up to; one past whitespace is not", () => {
		expect(maskCredentials("https://example.com/docs,mailto:bob@example.com")).toBe(
			`https://${R}@example.com`,
		);
		expect(maskCredentials("see https://example.com/docs or mail bob@example.com")).toBe(
			"see https://example.com/docs or mail bob@example.com",
		);
		expect(maskCredentials("https://alice:pw@h1 and https://bob:pw2@h2 end")).toBe(
			`https://${R}@h1 and https://${R}@h2 end`,
		);
	});

	test("the user name is masked along with the password", () => {
		expect(maskCredentials("https://alice:@host")).toBe(`https://${R}@host`);
		expect(maskCredentials("https://x-access-token:abc@github.com/o/r")).toBe(`https://${R}@github.com/o/r`);
	});

	test("after any ://, whatever comes before it", () => {
		for (const scheme of ["git+ssh", "x", "1", "", "postgres", "HTTPS", "not a scheme "]) {
			expect(maskCredentials(`${scheme}://u:p@h`)).toBe(`${scheme}://${R}@h`);
		}
	});

	test("quotes and slashes do not end the scan", () => {
		expect(maskCredentials('https://alice:"hunter2"/x\'y@host')).toBe(`https://${R}@host`);
	});

	test("no at-sign after the separator leaves the text as it is", () => {
		const text = "https://example.com/path?q=1 and more";
		expect(maskCredentials(text)).toBe(text);
		expect(maskCredentials("https://@host")).toBe("https://@host");
	});
});

describe("URL credentials: whitespace ends the URL", () => {
	test("a read_plan result: a URL, then an @chopin mention lines later, is left whole", () => {
		const text = [
			"document: Rollout plan",
			"id: d1",
			"url: http://chopin.test/d/d1",
			"revision: 3",
			"",
			"## Steps",
			"",
			"- Deploy to http://staging.internal:8080/api first.",
			"- Then ask @chopin to review, and mail ops@example.com.",
		].join("\n");
		expect(maskCredentials(text)).toBe(text);
	});

	test("only the credential of each URL is masked, line by line", () => {
		const text = "clone https://alice:hunter2@github.com/o/r\nthen\tping @chopin\nand https://x:y@h2 ok";
		expect(maskCredentials(text)).toBe(
			`clone https://${R}@github.com/o/r\nthen\tping @chopin\nand https://${R}@h2 ok`,
		);
	});

	test("every whitespace character ends it, and so does a line break or tab written as an escape (JSON text)", () => {
		for (const space of [" ", "\t", "\n", "\r", "\u00a0", "\u2028", "\u3000", "\\n", "\\r", "\\t", "\\\\n"]) {
			const text = `https://example.com/d${space}@chopin`;
			expect(maskCredentials(text)).toBe(text);
		}
		const json = JSON.stringify({ text: "url: http://chopin.test/d/d1\n\n- ask @chopin" });
		expect(maskCredentials(json)).toBe(json);
	});
});

describe("URL credentials: protocol-relative //", () => {
	test.each([
		["at the start", "//u:p@h", `//${R}@h`],
		["after a space", "x //u:p@h", `x //${R}@h`],
		["after a tab", "x\t//u:p@h", `x\t//${R}@h`],
		["after a line break", "x\n//u:p@h", `x\n//${R}@h`],
		['after "', 'src="//u:p@h"', `src="//${R}@h"`],
		["after '", "src='//u:p@h'", `src='//${R}@h'`],
		["after (", "url(//u:p@h)", `url(//${R}@h)`],
		["after <", "<//u:p@h>", `<//${R}@h>`],
		["after =", "href=//u:p@h", `href=//${R}@h`],
		["after [", "[//u:p@h]", `[//${R}@h]`],
		["after a comma", "a,//u:p@h", `a,//${R}@h`],
		["after a colon", "a://u:p@h", `a://${R}@h`],
		["written as backslashes", "x \\\\u:p@h", `x \\\\${R}@h`],
		["percent-encoded", "href=%2F%2Fu:p@h", `href=%2F%2F${R}@h`],
	])("%s", (_, text, masked) => {
		expect(maskCredentials(text)).toBe(masked);
	});

	test.each([
		["inside a path", "a/b//u:p@h"],
		["after a letter", "x//u:p@h"],
		["after a dot", ".//u:p@h"],
		["a single slash", " /u:p@h"],
	])("not %s", (_, text) => {
		expect(maskCredentials(text)).toBe(text);
	});
});

describe("URL credentials: every spelling of the at-sign", () => {
	test.each([
		["@"],
		["\\u0040"],
		["\\\\u0040"],
		["\\\\\\\\u0040"],
		["\\u{40}"],
		["\\u{0040}"],
		["\\u{000040}"],
		["%u0040"],
		["\\U00000040"],
		["\\x40"],
		["\\\\x40"],
		["\\100"],
		["%40"],
		["%2540"],
		["%252540"],
		["%25252540"],
		["%2525252525252540"],
		["%25u0040"],
		["&#64;"],
		["&#64"],
		["&#064;"],
		["&#0000064;"],
		["&#x40;"],
		["&#x40"],
		["&#X40;"],
		["&#x0040;"],
		["&commat;"],
		["&commat"],
		["&COMMAT;"],
		["&amp;#64;"],
		["&amp;amp;commat;"],
		["&AMP;#64;"],
		["&ampamp#64"],
	])("%s", (at) => {
		expect(maskCredentials(`https://alice:hunter2${at}host`)).toBe(`https://${R}${at}host`);
	});

	test("a decimal reference that goes on is another character (&#640 is not @)", () => {
		expect(maskCredentials("https://alice:pw&#640;host")).toBe("https://alice:pw&#640;host");
	});
});

describe("URL credentials: every spelling of the colon", () => {
	test.each([
		["\\u003a"],
		["\\u003A"],
		["\\\\u003a"],
		["\\u{3a}"],
		["\\u{003A}"],
		["%u003a"],
		["\\U0000003a"],
		["\\x3a"],
		["\\072"],
		["\\72"],
		["%3a"],
		["%3A"],
		["%253a"],
		["%25253A"],
		["&#58;"],
		["&#58"],
		["&#x3a;"],
		["&#x3A"],
		["&colon;"],
		["&colon"],
	])("%s", (colon) => {
		expect(maskCredentials(`https${colon}//alice:hunter2@host`)).toBe(`https${colon}//${R}@host`);
	});
});

describe("URL credentials: every spelling of the slashes", () => {
	test.each([
		["/"],
		["\\"],
		["\\/"],
		["\\\\/"],
		["\\u002f"],
		["\\u002F"],
		["\\\\u002f"],
		["\\u{2f}"],
		["%u002f"],
		["\\U0000002f"],
		["\\x2f"],
		["\\057"],
		["\\57"],
		["%2f"],
		["%2F"],
		["%252f"],
		["%25252F"],
		["&#47;"],
		["&#47"],
		["&#x2f;"],
		["&#x2F"],
		["&sol;"],
		["&sol"],
		["&bsol;"],
		["&#92;"],
		["&#x5c;"],
		["%5c"],
		["%255C"],
		["\\x5c"],
		["\\u005c"],
		["\\134"],
	])("%s", (slash) => {
		// "user", not "alice": "&#x2Fa" is one character reference, U+02FA, and no slash.
		expect(maskCredentials(`https:${slash}${slash}user:hunter2@host`)).toBe(
			`https:${slash}${slash}${R}@host`,
		);
	});

	test("a hex reference that goes on is another character (&#x2Fa is not /a)", () => {
		expect(maskCredentials("https:&#x2F&#x2Falice:pw@host")).toBe("https:&#x2F&#x2Falice:pw@host");
	});

	test("spellings mixed in one URL", () => {
		const text = "https%3A\\/\\/alice:pw&#64;host";
		expect(maskCredentials(text)).toBe(`https%3A\\/\\/${R}&#64;host`);
		expect(maskCredentials("https&colon;&sol;%2Falice:pw\\x40host")).toBe(
			`https&colon;&sol;%2F${R}\\x40host`,
		);
	});

	test("JSON text with escaped slashes, as a message holding JSON has them", () => {
		const json = JSON.stringify({ url: "https:\\/\\/alice:pw@host" });
		expect(maskCredentials(json)).toBe(`{"url":"https:\\\\/\\\\/${R}@host"}`);
	});

	test("tabs and line breaks before each slash", () => {
		expect(maskCredentials("https:\t/\t/alice:pw@host")).toBe(`https:\t/\t/${R}@host`);
		expect(maskCredentials("https:\n/\r\n/alice:pw@host")).toBe(`https:\n/\r\n/${R}@host`);
		expect(maskCredentials("https:\t\t//alice:pw@host")).toBe(`https:\t\t//${R}@host`);
	});

	test("more than two slashes are all the separator", () => {
		expect(maskCredentials("https:////alice:pw@host")).toBe(`https:////${R}@host`);
	});
});

describe("URL credentials: the 8,192-character window", () => {
	test("the window is 8,192", () => {
		expect(URL_CREDENTIAL_WINDOW).toBe(8192);
	});

	test("an at-sign that is the 8,192nd character after the separator is found; the 8,193rd is not", () => {
		const inside = `https://${"a".repeat(8191)}@host`;
		expect(maskCredentials(inside)).toBe(`https://${R}@host`);
		const outside = `https://${"a".repeat(8192)}@host`;
		expect(maskCredentials(outside)).toBe(outside);
	});

	test("the last at-sign within the window, not one past it", () => {
		const text = `https://alice:pw@host ${"x".repeat(9000)}@far`;
		expect(maskCredentials(text)).toBe(`https://${R}@host ${"x".repeat(9000)}@far`);
	});

	test("characters, not UTF-16 units: an emoji counts once", () => {
		const inside = `https://${"😀".repeat(8191)}@host`;
		expect(maskCredentials(inside)).toBe(`https://${R}@host`);
		const outside = `https://${"😀".repeat(8192)}@host`;
		expect(maskCredentials(outside)).toBe(outside);
	});

	test("scanning goes on after the at-sign: a later URL is masked on its own", () => {
		const text = `https://a:b@h ${"x".repeat(9000)} https://c:d@i`;
		expect(maskCredentials(text)).toBe(`https://${R}@h ${"x".repeat(9000)} https://${R}@i`);
	});
});

describe("URL credentials: a short plain user name", () => {
	test.each([
		"git",
		"alice",
		"deploy-bot",
		"ec2-user",
		"first.last",
		"a_b",
		"user1234",
		"abcdefghijklmnopqrst",
	])("%s stays visible", (user) => {
		expect(isPlainUserName(user)).toBe(true);
		expect(maskCredentials(`ssh://${user}@host`)).toBe(`ssh://${user}@host`);
	});

	test.each([
		["21 characters", "abcdefghijklmnopqrstu"],
		["5 digits", "user12345"],
		["a leading digit", "1user"],
		["a password", "alice:pw"],
		["a percent-encoded letter", "al%69ce"],
		["an escaped colon", "alice\\u003apw"],
		["non-ASCII", "alicé"],
	])("%s is masked", (_, user) => {
		expect(isPlainUserName(user)).toBe(false);
		expect(maskCredentials(`ssh://${user}@host`)).toBe(`ssh://${R}@host`);
	});

	test("with a spelled at-sign", () => {
		expect(maskCredentials("ssh://git%40host")).toBe("ssh://git%40host");
	});
});

describe("URL credentials: the spec's known limits are not masked", () => {
	test.each([
		["a fullwidth at-sign", "https://alice:pw＠host"],
		["a zero-width space splitting the slashes", "https:/\u200b/alice:pw@host"],
		["a zero-width joiner before the slashes", "https:\u200d//alice:pw@host"],
		["a soft hyphen splitting the slashes", "https:/\u00ad/alice:pw@host"],
		["a soft hyphen splitting %40", "https://alice:pw%4\u00ad0host"],
		["a tab written as an escape", "https:\\t//alice:pw@host"],
		["a line break written as an escape", "https:\\n//alice:pw@host"],
		["a tab written as an entity", "https:&Tab;//alice:pw@host"],
		["a line break written as an entity", "https:&#10;//alice:pw@host"],
		["a Python named escape", "https://alice:pw\\N{COMMERCIAL AT}host"],
		["percent-encoding of an escape's own characters", "https://alice:pw%25%34%30host"],
		["whitespace inside the user info", "https://alice:hunter 2@host"],
		["a line break inside the user info", "https://alice:hunter\n2@host"],
	])("%s", (_, text) => {
		expect(maskCredentials(text)).toBe(text);
	});
});

describe("URL credentials: linear time on adversarial input", () => {
	const MB = 1 << 20;
	test.each([
		["separators", "://".repeat(MB / 3)],
		["separators then one at-sign", `${"://".repeat(MB / 3)}@`],
		["separators and at-signs", "://@".repeat(MB / 4)],
		["a backslash run", "\\".repeat(MB)],
		["backslash runs and colons", `${"\\".repeat(999)}:`.repeat(MB / 1000)],
		["one % and a run of 25", `%${"25".repeat(MB / 2)}`],
		["&amp; repeated", "&amp;".repeat(MB / 5)],
		["one & and a run of amp;", `&${"amp;".repeat(MB / 4)}`],
		["line break and slash", "\n/".repeat(MB / 2)],
		["separators, spaces and at-signs", "://a @".repeat(MB / 6)],
		["escaped line breaks", `://${"\\n".repeat(MB / 2)}@`],
		["protocol-relative and at-sign", " //a@".repeat(MB / 5)],
		["a colon and tabs", `:${"\t".repeat(MB)}/`],
		["at-signs", "@".repeat(MB)],
		["emoji separators", `${"😀://".repeat(MB / 5)}@`],
	])("%s (1 MiB) completes", (_, text) => {
		expect(typeof maskCredentials(text)).toBe("string");
	});
});
