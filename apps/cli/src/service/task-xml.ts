// The Task Scheduler task's XML (UTF-16 LE with a BOM, as schtasks /XML reads it), and its action read back.
import type { ServiceDefinition } from "./definition";
import { xmlEscape, xmlUnescape } from "./launchd-plist";
import { TASK_NAME } from "./names";

/** How often, and how far apart, Task Scheduler starts a failed daemon again (the schema's most and least). */
export const RESTART_COUNT = 255;
export const RESTART_INTERVAL = "PT1M";

/**
 * A task for one user: started at their logon, with their own (interactive, least-privileged) token, so it needs no
 * administrator and gets their environment. No execution time limit (PT0S); a second start while one runs is
 * ignored; a failed run is started again. `chopin run --service task` ends final errors with 0, which is no failure.
 */
export function taskXml(definition: ServiceDefinition, user: string): string {
	const [command, ...args] = definition.argv;
	if (!command) throw new Error("a task needs a command");
	const lines = [
		'<?xml version="1.0" encoding="UTF-16"?>',
		"<!-- chopin's task, written by `chopin service install` and removed by `chopin service uninstall`. -->",
		'<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">',
		"  <RegistrationInfo>",
		"    <Description>Chopin machine daemon (chopin run)</Description>",
		`    <URI>${xmlEscape(TASK_NAME)}</URI>`,
		"  </RegistrationInfo>",
		"  <Triggers>",
		"    <LogonTrigger>",
		"      <Enabled>true</Enabled>",
		`      <UserId>${xmlEscape(user)}</UserId>`,
		"    </LogonTrigger>",
		"  </Triggers>",
		"  <Principals>",
		'    <Principal id="Author">',
		`      <UserId>${xmlEscape(user)}</UserId>`,
		"      <LogonType>InteractiveToken</LogonType>",
		"      <RunLevel>LeastPrivilege</RunLevel>",
		"    </Principal>",
		"  </Principals>",
		"  <Settings>",
		"    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>",
		"    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>",
		"    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>",
		"    <AllowHardTerminate>true</AllowHardTerminate>",
		"    <StartWhenAvailable>true</StartWhenAvailable>",
		"    <RunOnlyIfNetworkAvailable>false</RunOnlyIfNetworkAvailable>",
		"    <IdleSettings>",
		"      <StopOnIdleEnd>false</StopOnIdleEnd>",
		"      <RestartOnIdle>false</RestartOnIdle>",
		"    </IdleSettings>",
		"    <AllowStartOnDemand>true</AllowStartOnDemand>",
		"    <Enabled>true</Enabled>",
		"    <Hidden>false</Hidden>",
		"    <RunOnlyIfIdle>false</RunOnlyIfIdle>",
		"    <WakeToRun>false</WakeToRun>",
		"    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>",
		"    <Priority>7</Priority>",
		"    <RestartOnFailure>",
		`      <Interval>${RESTART_INTERVAL}</Interval>`,
		`      <Count>${RESTART_COUNT}</Count>`,
		"    </RestartOnFailure>",
		"  </Settings>",
		'  <Actions Context="Author">',
		"    <Exec>",
		`      <Command>${xmlEscape(command)}</Command>`,
		`      <Arguments>${xmlEscape(args.map(windowsQuote).join(" "))}</Arguments>`,
		"    </Exec>",
		"  </Actions>",
		"</Task>",
		"",
	];
	return lines.join("\r\n");
}

/** The XML as schtasks reads it: UTF-16 LE, with a byte order mark. */
export function taskXmlBytes(xml: string): Uint8Array {
	const bytes = new Uint8Array(2 + xml.length * 2);
	bytes[0] = 0xff;
	bytes[1] = 0xfe;
	for (let i = 0; i < xml.length; i++) {
		const unit = xml.charCodeAt(i);
		bytes[2 + i * 2] = unit & 0xff;
		bytes[3 + i * 2] = unit >> 8;
	}
	return bytes;
}

/** taskXmlBytes' text back (UTF-16 LE after its BOM), or undefined when the bytes are not that. */
export function decodeTaskXml(bytes: Uint8Array): string | undefined {
	if (bytes.length < 2 || bytes[0] !== 0xff || bytes[1] !== 0xfe || bytes.length % 2 !== 0) return undefined;
	return new TextDecoder("utf-16le").decode(bytes.subarray(2));
}

/** The action's argv (Command, then Arguments split as Windows programs split them), or undefined. */
export function taskArgv(xml: string): string[] | undefined {
	const command = /<Command>([\s\S]*?)<\/Command>/.exec(xml)?.[1];
	if (command === undefined) return undefined;
	const args = /<Arguments>([\s\S]*?)<\/Arguments>/.exec(xml)?.[1] ?? "";
	return [xmlUnescape(command), ...windowsSplit(xmlUnescape(args))];
}

/**
 * One argument quoted for a Windows command line as CommandLineToArgvW (and Bun, Node) read it: quotes only when
 * needed, a `"` escaped with `\`, and backslashes doubled only where they come before a quote.
 */
export function windowsQuote(arg: string): string {
	if (arg !== "" && !/[ \t\n\v"]/.test(arg)) return arg;
	let out = '"';
	let slashes = 0;
	for (const c of arg) {
		if (c === "\\") {
			slashes++;
			continue;
		}
		out += c === '"' ? `${"\\".repeat(slashes * 2 + 1)}"` : `${"\\".repeat(slashes)}${c}`;
		slashes = 0;
	}
	return `${out}${"\\".repeat(slashes * 2)}"`;
}

/** A command line's arguments split by CommandLineToArgvW's rules (those windowsQuote writes for). */
export function windowsSplit(line: string): string[] {
	const args: string[] = [];
	let current = "";
	let inWord = false;
	let quoted = false;
	for (let i = 0; i < line.length; i++) {
		const c = line[i]!;
		if (c === "\\") {
			let n = 0;
			while (line[i] === "\\") {
				n++;
				i++;
			}
			if (line[i] === '"') {
				current += "\\".repeat(Math.floor(n / 2));
				if (n % 2 === 1) current += '"';
				else {
					quoted = !quoted;
				}
			} else {
				current += "\\".repeat(n);
				i--;
			}
			inWord = true;
		} else if (c === '"') {
			quoted = !quoted;
			inWord = true;
		} else if (!quoted && (c === " " || c === "\t")) {
			if (inWord) args.push(current);
			current = "";
			inWord = false;
		} else {
			current += c;
			inWord = true;
		}
	}
	if (inWord) args.push(current);
	return args;
}
