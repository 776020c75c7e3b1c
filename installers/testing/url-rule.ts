// The installers' rule for where they may download from, on one table of URLs: install.sh's own function run by a
// real /bin/sh, and install.ps1's two expressions read out of the script (no PowerShell here to run it).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { run } from "../../scripts/testing/compiled-cli";

const INSTALL_SH = join(import.meta.dir, "..", "install.sh");
const INSTALL_PS1 = join(import.meta.dir, "..", "install.ps1");

/** [url, allowed]: any https://, and plain http:// only when the host is this machine, parsed as curl parses it. */
export const URL_CASES: readonly (readonly [string, boolean])[] = [
	["https://github.com/chopin-app/chopin/releases/latest/download", true],
	["HTTPS://Example.COM/chopin/latest", true],
	["http://localhost", true],
	["http://localhost/releases/latest/download", true],
	["http://LocalHost:8080/x", true],
	["HTTP://LOCALHOST/x", true],
	["http://127.0.0.1:8765", true],
	["http://127.0.0.1/", true],
	["http://127.1.2.3:65535/x", true],
	["http://127.255.255.255/x", true],
	["http://[::1]/x", true],
	["http://[::1]:8080", true],
	// After ? or # the authority has ended: curl goes to localhost.
	["http://localhost?@evil.invalid/", true],
	["http://localhost#@evil.invalid/", true],
	// The tricks of issue 18: another host that starts like this machine, and userinfo before the real host.
	["http://127.0.0.1.nip.invalid/x", false],
	["http://localhost:x@evil.invalid/x", false],
	["http://localhost@evil.invalid/", false],
	["http://user:secret@localhost/", false],
	["http://localhost.evil.invalid/", false],
	["http://localhost./", false],
	["http://localhostx/", false],
	["http://evil.invalid/", false],
	["http://evil.invalid/localhost", false],
	["http://evil.invalid/@localhost", false],
	["http://127.0.0.1x/", false],
	["http://127.0.0/", false],
	["http://127.0.0.1.1/", false],
	["http://127.0.0.256/", false],
	// Not plain decimal: leading zeros, octal, hex and a bare number are read as other addresses by some parsers.
	["http://127.0.0.01/", false],
	["http://0177.0.0.1/", false],
	["http://0x7f.0.0.1/", false],
	["http://2130706433/", false],
	["http://128.0.0.1/", false],
	["http://10.0.0.1/", false],
	["http://0.0.0.0/", false],
	["http://[::2]/", false],
	["http://[::1]x/", false],
	["http://[::1/", false],
	["http://[0:0:0:0:0:0:0:1]/", false],
	["http://[::ffff:127.0.0.1]/", false],
	["http://localhost:/", false],
	["http://localhost:123456/", false],
	["http://localhost:80x/", false],
	["http://localhost:-1/", false],
	["http://localhost\\@evil.invalid/", false],
	["http://127.0.0.1%2eevil.invalid/", false],
	["http://local host/", false],
	["http://localhost/a b", false],
	["http://localhost/\nhttp://evil.invalid/", false],
	["http://localhost/\n", false],
	// Letters that fold or map to ASCII: the long s (ſ, like s) and fullwidth full stops (IDNA maps them to dots).
	["http://localho\u017ft/", false],
	["http://127\uff0e0\uff0e0\uff0e1/", false],
	["http:/localhost/", false],
	["http:localhost", false],
	["ftp://localhost/", false],
	["file:///tmp/chopin", false],
	["//localhost/", false],
	["localhost", false],
	["", false],
];

/** install.sh's url_allowed (the script's own text, less its last line, run by `shell`: /bin/sh unless given) on each URL. */
export async function shDecisions(
	urls: readonly string[],
	shell: readonly string[] = ["/bin/sh"],
	env: Record<string, string> = {},
): Promise<boolean[]> {
	const text = readFileSync(INSTALL_SH, "utf8").trimEnd();
	const lastLine = text.lastIndexOf("\n");
	if (text.slice(lastLine + 1) !== 'main "$@"') throw new Error('install.sh no longer ends with main "$@"');
	const script = `${text.slice(0, lastLine)}\nfor u in "$@"; do if url_allowed "$u"; then echo 1; else echo 0; fi; done\n`;
	const result = await run([...shell, "-c", script, "sh", ...urls], {
		env: { PATH: process.env.PATH ?? "", ...env },
	});
	if (result.code !== 0) throw new Error(`sh failed: ${result.stderr}`);
	const lines = result.stdout.trimEnd().split("\n");
	if (lines.length !== urls.length)
		throw new Error(`sh answered ${lines.length} times for ${urls.length} URLs`);
	return lines.map((line) => line === "1");
}

/**
 * install.ps1's Test-ChopinDownloadUrl as JavaScript: its two expressions, taken from the script, in a function body
 * that must read exactly as below. `-cmatch` is a case-sensitive match and `-match` a case-insensitive one; .NET and
 * JavaScript read these expressions alike (no Unicode classes, and `$` only ever meets a string with no newline,
 * which the first expression refuses).
 */
export function ps1Rule(): (url: string) => boolean {
	const text = readFileSync(INSTALL_PS1, "utf8");
	const match =
		/\nfunction Test-ChopinDownloadUrl \{\n\tparam\(\[string\]\$Url\)\n\n\t\$notUrlCharacter = '((?:[^']|'')*)'\n\t\$allowedUrl = '((?:[^']|'')*)'\n\tif \(\$Url -cmatch \$notUrlCharacter\) \{ return \$false \}\n\treturn \(\$Url -match \$allowedUrl\)\n\}\n/.exec(
			text,
		);
	if (!match) throw new Error("install.ps1's Test-ChopinDownloadUrl no longer has the shape this test reads");
	if (!text.includes("if (-not (Test-ChopinDownloadUrl $url)) {"))
		throw new Error("install.ps1 no longer checks $url with Test-ChopinDownloadUrl");
	const notUrlCharacter = new RegExp(match[1]!.replaceAll("''", "'"));
	const allowedUrl = new RegExp(match[2]!.replaceAll("''", "'"), "i");
	return (url) => !notUrlCharacter.test(url) && allowedUrl.test(url);
}
