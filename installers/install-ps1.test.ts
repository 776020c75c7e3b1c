// install.ps1 checked statically (no PowerShell here), and parsed by PowerShell itself where pwsh is installed.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { documentedCodes } from "./testing/error-codes";
import { lintPowerShell } from "./testing/powershell-lint";
import { ps1Rule, shDecisions, URL_CASES } from "./testing/url-rule";

const SCRIPT = join(import.meta.dir, "install.ps1");
const text = readFileSync(SCRIPT, "utf8");

/** Cmdlets in Windows PowerShell 5.1 that install.ps1 may use. */
const COMMANDS = [
	"Copy-Item",
	"ForEach-Object",
	"Get-ChildItem",
	"Get-Command",
	"Get-Content",
	"Get-FileHash",
	"Invoke-WebRequest",
	"Join-Path",
	"Move-Item",
	"New-Item",
	"Out-Null",
	"Out-String",
	"Remove-Item",
	"Select-Object",
	"Start-Sleep",
	"Test-Path",
	"Where-Object",
	"Write-Host",
	"Write-Warning",
];

describe("install.ps1, statically", () => {
	test("lexes cleanly: balanced, closed, ASCII, every variable assigned, known commands, PowerShell 5.1 syntax", () => {
		expect(lintPowerShell(text, { commands: COMMANDS })).toEqual([]);
	});

	test("the lint catches what it claims to", () => {
		const lint = (script: string) => lintPowerShell(script, { commands: COMMANDS });
		expect(lint("if ($a) { Write-Host 'x'\n")).toEqual(["unclosed {"]);
		expect(lint("Write-Host 'unclosed\n")).toEqual(["unclosed '...' string"]);
		expect(lint('Write-Host "a $(Join-Path a b"\n')).toEqual(['unclosed "..." string']);
		expect(lint("$installDir = 'x'\nWrite-Host $instalDir\n")).toEqual([
			"$instalDir on line 2 is never assigned",
		]);
		expect(lint('$a = 1\nWrite-Host "$\u007ba}: $b"\n')).toEqual(["$b on line 2 is never assigned"]);
		expect(lint("Get-Thing | Out-Null\n")).toEqual(["unknown command Get-Thing on line 1"]);
		expect(lint("$a = 1\nTest-Path x && Write-Host $a\n")).toEqual([
			"&& on line 2 needs PowerShell 7; Windows PowerShell 5.1 refuses it",
		]);
		expect(lint("$a = $env:X ?? 'y'\n")).toEqual([
			"?? on line 1 needs PowerShell 7; Windows PowerShell 5.1 refuses it",
		]);
		expect(lint("if ($true) { exit 1 }\n")).toEqual([
			"exit on line 1 would close the window of a person running it with iex",
		]);
		expect(lint("Write-Host 'caf\u00e9'\n")[0]).toStartWith("non-ASCII or control character");
		// Strings, comments and here-strings hide their brackets and words.
		expect(lint("# ( { exit\n<# ) #>\n$s = @'\n) exit $nope\n'@\nWrite-Host \"}\" '(' $s\n")).toEqual([]);
	});

	test("keeps the contract: the variables, ~\\.chopin\\bin, SHA-256 from SHA256SUMS, the user PATH", () => {
		for (const name of ["CHOPIN_VERSION", "CHOPIN_INSTALL_DIR", "CHOPIN_DOWNLOAD_URL"]) {
			expect(text).toContain(`"$env:${name}".Trim()`);
		}
		expect(text).toContain("Join-Path ([Environment]::GetFolderPath('UserProfile')) '.chopin\\bin'");
		expect(text).toContain("$asset = 'chopin-windows-x64.exe'");
		expect(text).toContain("Get-FileHash -Algorithm SHA256");
		expect(text).toContain('"$url/SHA256SUMS"');
		expect(text).toContain("OpenSubKey('Environment', $true)");
		expect(text).toContain("$actual = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash");
		expect(text).toContain("[Microsoft.Win32.RegistryValueKind]::ExpandString");
		expect(text.match(/^\$ChopinDefaultDownloadUrl = '[^']*'$/gm)).toEqual([
			"$ChopinDefaultDownloadUrl = 'https://github.com/chopin-app/chopin/releases/download/v{version}'",
		]);
		// Everything happens in the one call at the end; a script cut short defines functions and stops.
		expect(text.trimEnd()).toEndWith("Install-Chopin -DefaultDownloadUrl $ChopinDefaultDownloadUrl");
	});
});

/** The text of one function of the script, from its `function` line to its closing brace. */
function functionText(name: string): string {
	const start = text.indexOf(`\nfunction ${name} {\n`);
	expect(start).toBeGreaterThan(0);
	return text.slice(start + 1, text.indexOf("\n}\n", start) + 2);
}

describe("install.ps1, what it does (read, not run: there is no PowerShell here)", () => {
	test("decides every URL of the table as install.sh does: its two expressions, read as JavaScript", async () => {
		const urls = URL_CASES.map(([url]) => url);
		const decisions = urls.map(ps1Rule());
		expect(decisions).toEqual(URL_CASES.map(([, allowed]) => allowed));
		expect(decisions).toEqual(await shDecisions(urls));
	});

	test("every error is a documented code with one sentence (and a hint), and every documented code is used", () => {
		// `throw` alone rethrows; every other throw goes through Format-ChopinError.
		const code = text.replace(/^\s*#.*$/gm, "");
		const throws = [...code.matchAll(/\bthrow\b(.*)$/gm)].map((m) => m[1]!.trim());
		expect(throws.filter((rest) => rest !== "" && !rest.startsWith("(Format-ChopinError '"))).toEqual([]);
		const codes = new Set([...text.matchAll(/Format-ChopinError '([a-z-]+)'/g)].map((m) => m[1]!));
		for (const m of text.matchAll(/\[(path-not-updated)\]/g)) codes.add(m[1]!);
		expect([...codes].sort()).toEqual(documentedCodes("install.ps1"));
		expect(functionText("Format-ChopinError")).toContain(
			'$text = "chopin install: error [$Code]: $Message"\n\tif ($Hint) { $text += "`nchopin install: hint: $Hint" }',
		);
	});

	test("SHA256SUMS's signature: cosign when installed, failing closed; otherwise one line on checking by hand", () => {
		const verify = functionText("Test-ChopinSumsSignature");
		// Only a program named cosign counts (not an alias or a function), and without one nothing is downloaded.
		expect(verify).toContain(
			"$cosign = Get-Command cosign -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1\n\tif (-not $cosign) { return $false }",
		);
		expect(verify).toContain(
			"Invoke-WebRequest -UseBasicParsing -Uri \"$Url/SHA256SUMS.sigstore.json\" -OutFile $bundle\n\t} catch {\n\t\tthrow (Format-ChopinError 'signature-missing'",
		);
		expect(verify).toContain("$identity = @('--certificate-identity', ($Signer.Identity + $Version))");
		expect(verify).toContain("$identity = @('--certificate-identity-regexp', $Signer.IdentityRegexp)");
		expect(verify).toContain(
			"$arguments = @('verify-blob', '--bundle', $bundle) + $identity + @('--certificate-oidc-issuer', $Signer.Issuer, $SumsFile)",
		);
		// cosign's stderr must not become a terminating error under 'Stop' in Windows PowerShell 5.1.
		expect(verify).toContain(
			"$ErrorActionPreference = 'Continue'\n\t$output = & $cosign.Path @arguments 2>&1",
		);
		expect(verify).toContain("if ($LASTEXITCODE -ne 0) {");
		expect(verify).toContain("throw (Format-ChopinError 'signature-invalid'");
		// The same signer as install.sh.
		const sh = readFileSync(join(import.meta.dir, "install.sh"), "utf8");
		for (const [key, variable] of [
			["Repo", "signer_repo"],
			["Identity", "signer_identity"],
			["IdentityRegexp", "signer_identity_regexp"],
			["Issuer", "signer_issuer"],
		] as const) {
			const value = new RegExp(`^${variable}='([^']*)'$`, "m").exec(sh)?.[1];
			expect(value).toBeDefined();
			expect(text).toContain(`\t\t${key} = '${value}'\n`);
		}
		// Checked before the SHA-256 is trusted, and a note when it could not be.
		expect(text.indexOf("$signed = Test-ChopinSumsSignature $url $sumsFile $version $signer")).toBeLessThan(
			text.indexOf("$expected = $null"),
		);
		expect(text).toContain(
			'if (-not $signed) {\n\t\t\tWrite-Host "note: cosign is not installed, so the signature on SHA256SUMS was not checked (the SHA-256 was). To check it: gh attestation verify $target --repo $($signer.Repo), or cosign verify-blob --bundle SHA256SUMS.sigstore.json --certificate-identity $($signer.Identity)$installedVersion --certificate-oidc-issuer $($signer.Issuer) SHA256SUMS with both files from $url"',
		);
	});

	test("a missing HKCU\\Environment is created; a PATH that cannot be written is a warning, chopin stays installed", () => {
		expect(functionText("Add-ChopinToUserPath")).toContain(
			"$key = [Microsoft.Win32.Registry]::CurrentUser.OpenSubKey('Environment', $true)\n\tif ($null -eq $key) {",
		);
		expect(functionText("Add-ChopinToUserPath")).toContain(
			"$key = [Microsoft.Win32.Registry]::CurrentUser.CreateSubKey('Environment')\n\t}",
		);
		expect(text).toMatch(
			/\t\ttry \{\n\t\t\tif \(Add-ChopinToUserPath \$installDir\) \{\n[\s\S]*?\n\t\t\} catch \{\n[^\n]*\n\t\t\tWrite-Warning "chopin install: \[path-not-updated\] /,
		);
	});

	test("the new chopin.exe is renamed into place with retries while a scanner holds it, then a clear error", () => {
		const move = functionText("Move-ChopinFile");
		expect(move).toContain("foreach ($delay in @(250, 500, 1000, 2000, 4000, 0)) {");
		expect(move).toContain("Move-Item -LiteralPath $From -Destination $To\n\t\t\treturn");
		expect(move).toContain("Start-Sleep -Milliseconds $delay");
		expect(move).toContain("throw (Format-ChopinError 'file-busy'");
		// Every rename of chopin.exe goes through it: the old one aside, the new one in, the old one back.
		expect(text.match(/Move-Item /g)).toHaveLength(1);
		expect(text).toContain("Move-ChopinFile $target $aside");
		expect(text).toContain("Move-ChopinFile $staged $target");
		expect(text).toContain("if ($aside) { Move-ChopinFile $aside $target }");
	});

	test("CHOPIN_INSTALL_DIR is made absolute against PowerShell's location, and refused outside the file system", () => {
		const resolve = functionText("Resolve-ChopinInstallDir");
		expect(resolve).toContain(
			"$full = $ExecutionContext.SessionState.Path.GetUnresolvedProviderPathFromPSPath($Dir, [ref]$provider, [ref]$drive)",
		);
		expect(resolve).toContain(
			"if ($provider.Name -ne 'FileSystem' -or -not [IO.Path]::IsPathRooted($full)) {",
		);
		expect(resolve.match(/throw \(Format-ChopinError 'install-dir-invalid'/g)).toHaveLength(2);
		expect(resolve).toContain('Write-Host "note: CHOPIN_INSTALL_DIR=$Dir resolves to $full"');
		expect(text).toContain(
			"$installDir = Resolve-ChopinInstallDir $installDir\n\t$target = Join-Path $installDir 'chopin.exe'",
		);
	});

	test("runs under `irm | iex` in Windows PowerShell 5.1: no script param(), no PowerShell 7 syntax", () => {
		// param() only inside functions: a script piped to iex has no parameters.
		const beforeFirstFunction = text.slice(0, text.indexOf("\nfunction "));
		expect(beforeFirstFunction).not.toMatch(/^\s*param\s*\(/im);
		const code = text.replace(/'(?:[^']|'')*'/g, "''").replace(/#.*$/gm, "");
		for (const operator of ["??", "?.", "&&", "||", "::new(", "-Parallel", "ForEach-Object -Parallel"]) {
			expect(code).not.toContain(operator);
		}
		// A ternary is `<cond> ? <a> : <b>`; PowerShell 5.1 has none.
		expect(code).not.toMatch(/\s\?\s[^\n]*\s:\s/);
	});
});

const pwsh = Bun.which("pwsh");
if (!pwsh) console.warn("note: pwsh is not installed; install.ps1 is checked statically only, never run.");

describe("install.ps1 under PowerShell", () => {
	test.skipIf(!pwsh)("parses without errors", async () => {
		const command = `$e = $null; [void][System.Management.Automation.Language.Parser]::ParseFile('${SCRIPT}', [ref]$null, [ref]$e); $e | ForEach-Object { $_.ToString() }; exit $e.Count`;
		const child = Bun.spawn([pwsh!, "-NoProfile", "-NonInteractive", "-Command", command], {
			stdout: "pipe",
			stderr: "pipe",
		});
		const output = await new Response(child.stdout).text();
		expect(output).toBe("");
		expect(await child.exited).toBe(0);
	});
});
