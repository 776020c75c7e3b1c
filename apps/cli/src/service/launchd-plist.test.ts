import { afterEach, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { createTestContext, type TestContext } from "../testing/context";
import {
	durableTempDir,
	PLIST_CATALOG,
	recordingRunner,
	serviceTestDeps,
	xmllint,
	xpath,
} from "../testing/service";
import { buildDefinition, type ServiceDefinition } from "./definition";
import { launchdPlist, plistArgv } from "./launchd-plist";

let ctx: TestContext | undefined;
const dirs: string[] = [];
afterEach(() => {
	ctx?.cleanup();
	ctx = undefined;
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const HOSTILE = "/Users/ana/we ird <&> \"q\" 'a' $HOME %h";

function hostile(): ServiceDefinition {
	return {
		manager: "launchd",
		program: [`${HOSTILE}/chopin`],
		argv: [`${HOSTILE}/chopin`, "run", "--service", "launchd"],
		env: [
			["PATH", `${HOSTILE}/bin:/usr/bin:/bin`],
			["CHOPIN_STATE_DIR", `${HOSTILE}/state`],
			["CHOPIN_CONFIG_DIR", `${HOSTILE}/config`],
		],
		logFile: `${HOSTILE}/state/logs/service.log`,
		file: "/Users/ana/Library/LaunchAgents/dev.chopin.machine.plist",
	};
}

function save(text: string): string {
	const dir = durableTempDir();
	dirs.push(dir);
	const file = join(dir, "dev.chopin.machine.plist");
	writeFileSync(file, text);
	return file;
}

describe("the LaunchAgent's plist", () => {
	test("is exactly this for a machine", () => {
		ctx = createTestContext({ platform: "darwin", env: { PATH: "/opt/homebrew/bin:/usr/bin:/bin" } });
		const { definition } = buildDefinition(
			serviceTestDeps(ctx, recordingRunner(), { platform: "darwin" }),
			undefined,
		);
		const [bun, main] = ctx.selfCommand;
		const state = ctx.paths.stateDir;
		expect(launchdPlist(definition)).toBe(
			[
				'<?xml version="1.0" encoding="UTF-8"?>',
				'<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
				"<!-- chopin's LaunchAgent, written by `chopin service install` and removed by `chopin service uninstall`. -->",
				'<plist version="1.0">',
				"<dict>",
				"\t<key>Label</key>",
				"\t<string>dev.chopin.machine</string>",
				"\t<key>ProgramArguments</key>",
				"\t<array>",
				`\t\t<string>${bun}</string>`,
				`\t\t<string>${main}</string>`,
				"\t\t<string>run</string>",
				"\t\t<string>--service</string>",
				"\t\t<string>launchd</string>",
				"\t</array>",
				"\t<key>EnvironmentVariables</key>",
				"\t<dict>",
				"\t\t<key>PATH</key>",
				"\t\t<string>/opt/homebrew/bin:/usr/bin:/bin</string>",
				"\t\t<key>CHOPIN_STATE_DIR</key>",
				`\t\t<string>${state}</string>`,
				"\t\t<key>CHOPIN_CONFIG_DIR</key>",
				`\t\t<string>${ctx.paths.configDir}</string>`,
				"\t</dict>",
				"\t<key>RunAtLoad</key>",
				"\t<true/>",
				"\t<key>KeepAlive</key>",
				"\t<dict>",
				"\t\t<key>SuccessfulExit</key>",
				"\t\t<false/>",
				"\t</dict>",
				"\t<key>ThrottleInterval</key>",
				"\t<integer>10</integer>",
				"\t<key>ExitTimeOut</key>",
				"\t<integer>30</integer>",
				"\t<key>StandardOutPath</key>",
				`\t<string>${state}/logs/service.log</string>`,
				"\t<key>StandardErrorPath</key>",
				`\t<string>${state}/logs/service.log</string>`,
				"</dict>",
				"</plist>",
				"",
			].join("\n"),
		);
		expect(definition.file).toBe(join(ctx.home, "Library", "LaunchAgents", "dev.chopin.machine.plist"));
	});

	test("is well-formed and valid property-list XML to libxml2, hostile paths included", async () => {
		const file = save(launchdPlist(hostile()));
		expect(await xmllint(["--noout", "--nonet", file])).toMatchObject({ exitCode: 0, stderr: "" });
		// Valid against its own DOCTYPE, which the catalog resolves to the property-list grammar offline.
		expect(await xmllint(["--noout", "--nonet", "--valid", file], PLIST_CATALOG)).toMatchObject({
			exitCode: 0,
			stderr: "",
		});
		const value = (key: string) => `/plist/dict/key[.='${key}']/following-sibling::*[1]`;
		expect(await xpath(file, `${value("ProgramArguments")}/string[1]`)).toBe(`${HOSTILE}/chopin`);
		expect(await xpath(file, `count(${value("ProgramArguments")}/string)`)).toBe("4");
		expect(
			await xpath(file, `${value("EnvironmentVariables")}/key[.='CHOPIN_STATE_DIR']/following-sibling::*[1]`),
		).toBe(`${HOSTILE}/state`);
		expect(await xpath(file, `name(${value("RunAtLoad")})`)).toBe("true");
		expect(
			await xpath(file, `name(${value("KeepAlive")}/key[.='SuccessfulExit']/following-sibling::*[1])`),
		).toBe("false");
		expect(await xpath(file, value("StandardOutPath"))).toBe(`${HOSTILE}/state/logs/service.log`);
		expect(await xpath(file, value("StandardErrorPath"))).toBe(`${HOSTILE}/state/logs/service.log`);
		// The check has teeth: a dict with a key and no value is not a property list.
		const broken = save(launchdPlist(hostile()).replace("\t<true/>\n", ""));
		expect((await xmllint(["--noout", "--nonet", "--valid", broken], PLIST_CATALOG)).stderr).toContain(
			"validity error",
		);
	});

	test.skipIf(Bun.which("plutil") === null)("passes plutil -lint (macOS)", async () => {
		const file = save(launchdPlist(hostile()));
		expect((await execa("plutil", ["-lint", file], { reject: false })).exitCode).toBe(0);
	});

	test("reads back to the argv it was written from", () => {
		expect(plistArgv(launchdPlist(hostile()))).toEqual(hostile().argv);
		expect(plistArgv("<plist><dict/></plist>")).toBeUndefined();
	});
});
