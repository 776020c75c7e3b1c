// install.ps1 checked statically (no PowerShell here), and parsed by PowerShell itself where pwsh is installed.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { lintPowerShell } from "./testing/powershell-lint";

const SCRIPT = join(import.meta.dir, "install.ps1");
const text = readFileSync(SCRIPT, "utf8");

/** Cmdlets in Windows PowerShell 5.1 that install.ps1 may use. */
const COMMANDS = [
	"Copy-Item",
	"Get-ChildItem",
	"Get-Content",
	"Get-FileHash",
	"Invoke-WebRequest",
	"Join-Path",
	"Move-Item",
	"New-Item",
	"Out-Null",
	"Out-String",
	"Remove-Item",
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
		expect(text).toContain("[Microsoft.Win32.RegistryValueKind]::ExpandString");
		expect(text.match(/^\$ChopinDefaultDownloadUrl = '[^']*'$/gm)).toEqual([
			"$ChopinDefaultDownloadUrl = 'https://github.com/chopin-app/chopin/releases/download/v{version}'",
		]);
		// Everything happens in the one call at the end; a script cut short defines functions and stops.
		expect(text.trimEnd()).toEndWith("Install-Chopin -DefaultDownloadUrl $ChopinDefaultDownloadUrl");
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
