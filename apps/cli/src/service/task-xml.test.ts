import { afterEach, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { durableTempDir, xmllint, xpath } from "../testing/service";
import type { ServiceDefinition } from "./definition";
import { decodeTaskXml, taskArgv, taskXml, taskXmlBytes, windowsQuote, windowsSplit } from "./task-xml";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const EXE = "C:\\Users\\ana\\.chopin\\bin\\chopin.exe";

function definition(argv: string[] = [EXE, "run", "--service", "task"]): ServiceDefinition {
	return {
		manager: "task",
		program: argv.slice(0, -3),
		argv,
		env: [],
		logFile: "C:\\Users\\ana\\AppData\\Local\\chopin\\Data\\logs\\service.log",
		file: "C:\\Users\\ana\\AppData\\Local\\chopin\\Data\\service\\chopin-task.xml",
	};
}

function save(bytes: Uint8Array): string {
	const dir = durableTempDir();
	dirs.push(dir);
	const file = join(dir, "chopin-task.xml");
	writeFileSync(file, bytes);
	return file;
}

describe("the Task Scheduler task", () => {
	test("is exactly this XML, in UTF-16 LE with a byte order mark", () => {
		const text = taskXml(definition(), "LAPTOP\\ana");
		expect(text).toBe(
			[
				'<?xml version="1.0" encoding="UTF-16"?>',
				"<!-- chopin's task, written by `chopin service install` and removed by `chopin service uninstall`. -->",
				'<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">',
				"  <RegistrationInfo>",
				"    <Description>Chopin machine daemon (chopin run)</Description>",
				"    <URI>\\Chopin\\chopin-machine</URI>",
				"  </RegistrationInfo>",
				"  <Triggers>",
				"    <LogonTrigger>",
				"      <Enabled>true</Enabled>",
				"      <UserId>LAPTOP\\ana</UserId>",
				"    </LogonTrigger>",
				"  </Triggers>",
				"  <Principals>",
				'    <Principal id="Author">',
				"      <UserId>LAPTOP\\ana</UserId>",
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
				"      <Interval>PT1M</Interval>",
				"      <Count>255</Count>",
				"    </RestartOnFailure>",
				"  </Settings>",
				'  <Actions Context="Author">',
				"    <Exec>",
				`      <Command>${EXE}</Command>`,
				"      <Arguments>run --service task</Arguments>",
				"    </Exec>",
				"  </Actions>",
				"</Task>",
				"",
			].join("\r\n"),
		);
		const bytes = taskXmlBytes(text);
		expect([...bytes.subarray(0, 6)]).toEqual([0xff, 0xfe, 0x3c, 0x00, 0x3f, 0x00]);
		expect(decodeTaskXml(bytes)).toBe(text);
		expect(decodeTaskXml(new TextEncoder().encode(text))).toBeUndefined();
	});

	test("libxml2 reads the UTF-16 file, hostile paths included, and finds what Task Scheduler will", async () => {
		const odd = 'C:\\Users\\a & b <c>\\"q"\\chopin.exe';
		const main = "C:\\src\\my chopin\\apps\\cli\\src\\main.ts";
		const file = save(taskXmlBytes(taskXml(definition([odd, main, "run", "--service", "task"]), "DOM\\a&b")));
		expect(await xmllint(["--noout", "--nonet", file])).toMatchObject({ exitCode: 0, stderr: "" });
		const at = (path: string) =>
			path
				.split("/")
				.map((name) => `*[local-name()='${name}']`)
				.join("/");
		expect(await xpath(file, `/${at("Task/Actions/Exec/Command")}`)).toBe(odd);
		expect(await xpath(file, `/${at("Task/Actions/Exec/Arguments")}`)).toBe(
			'"C:\\src\\my chopin\\apps\\cli\\src\\main.ts" run --service task',
		);
		expect(await xpath(file, `/${at("Task/Triggers/LogonTrigger/UserId")}`)).toBe("DOM\\a&b");
		expect(await xpath(file, `/${at("Task/Principals/Principal/LogonType")}`)).toBe("InteractiveToken");
		expect(await xpath(file, `/${at("Task/Principals/Principal/RunLevel")}`)).toBe("LeastPrivilege");
		expect(await xpath(file, `/${at("Task/Settings/MultipleInstancesPolicy")}`)).toBe("IgnoreNew");
		expect(await xpath(file, `/${at("Task/Settings/ExecutionTimeLimit")}`)).toBe("PT0S");
		expect(await xpath(file, `/${at("Task/Settings/RestartOnFailure/Count")}`)).toBe("255");
		expect(await xpath(file, `/${at("Task/Settings/RestartOnFailure/Interval")}`)).toBe("PT1M");
		// The check has teeth: the same XML declared UTF-16 but written as UTF-8 is refused.
		const utf8 = save(new TextEncoder().encode(taskXml(definition(), "DOM\\ana")));
		expect((await xmllint(["--noout", "--nonet", utf8])).exitCode).not.toBe(0);
	});

	test("reads back to the argv it was written from", () => {
		const argv = [
			'C:\\a "b"\\c.exe',
			"C:\\x y\\main.ts",
			'tail\\"',
			"back\\\\",
			"",
			"run",
			"--service",
			"task",
		];
		const bytes = taskXmlBytes(taskXml(definition(argv), "DOM\\ana"));
		expect(taskArgv(decodeTaskXml(bytes)!)).toEqual(argv);
	});
});

describe("Windows command-line quoting (CommandLineToArgvW's rules)", () => {
	test.each([
		["plain", "plain"],
		["", '""'],
		["two words", '"two words"'],
		['say "hi"', '"say \\"hi\\""'],
		["C:\\dir\\", "C:\\dir\\"],
		["C:\\my dir\\", '"C:\\my dir\\\\"'],
		['a\\"b', '"a\\\\\\"b"'],
		["tab\there", '"tab\there"'],
	])("%p is written %p and read back", (arg, quoted) => {
		expect(windowsQuote(arg)).toBe(quoted);
		expect(windowsSplit(quoted)).toEqual([arg]);
	});

	test("a line splits on unquoted spaces and tabs", () => {
		expect(windowsSplit('  a  "b c"\td"e f"g ')).toEqual(["a", "b c", "de fg"]);
	});
});
