// The LaunchAgent's property list (XML), and its ProgramArguments read back (status needs the program).
import type { ServiceDefinition } from "./definition";
import { LAUNCHD_LABEL } from "./names";

/** Seconds launchd waits between SIGTERM and SIGKILL when it stops the agent: above the daemon's own bounded stop. */
export const EXIT_TIMEOUT_SEC = 30;
/** Seconds launchd leaves between two starts of the agent (its own default is 10). */
export const THROTTLE_INTERVAL_SEC = 10;

/**
 * RunAtLoad starts it at login; KeepAlive with SuccessfulExit false starts it again after a failure only. So a final
 * error, which `chopin run --service launchd` ends with 0 (after recording why in daemon-exit.json), is not restarted,
 * nor is a daemon stopped on purpose (SIGTERM, `chopin service uninstall`).
 */
export function launchdPlist(definition: ServiceDefinition): string {
	const string = (text: string) => `<string>${xmlEscape(text)}</string>`;
	const lines = [
		'<?xml version="1.0" encoding="UTF-8"?>',
		'<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
		"<!-- chopin's LaunchAgent, written by `chopin service install` and removed by `chopin service uninstall`. -->",
		'<plist version="1.0">',
		"<dict>",
		"\t<key>Label</key>",
		`\t${string(LAUNCHD_LABEL)}`,
		"\t<key>ProgramArguments</key>",
		"\t<array>",
		...definition.argv.map((word) => `\t\t${string(word)}`),
		"\t</array>",
		"\t<key>EnvironmentVariables</key>",
		"\t<dict>",
		...definition.env.flatMap(([name, value]) => [
			`\t\t<key>${xmlEscape(name)}</key>`,
			`\t\t${string(value)}`,
		]),
		"\t</dict>",
		"\t<key>RunAtLoad</key>",
		"\t<true/>",
		"\t<key>KeepAlive</key>",
		"\t<dict>",
		"\t\t<key>SuccessfulExit</key>",
		"\t\t<false/>",
		"\t</dict>",
		"\t<key>ThrottleInterval</key>",
		`\t<integer>${THROTTLE_INTERVAL_SEC}</integer>`,
		"\t<key>ExitTimeOut</key>",
		`\t<integer>${EXIT_TIMEOUT_SEC}</integer>`,
		"\t<key>StandardOutPath</key>",
		`\t${string(definition.logFile)}`,
		"\t<key>StandardErrorPath</key>",
		`\t${string(definition.logFile)}`,
		"</dict>",
		"</plist>",
		"",
	];
	return lines.join("\n");
}

export function xmlEscape(text: string): string {
	return text
		.replaceAll("&", "&amp;")
		.replaceAll("<", "&lt;")
		.replaceAll(">", "&gt;")
		.replaceAll('"', "&quot;")
		.replaceAll("'", "&apos;");
}

export function xmlUnescape(text: string): string {
	return text
		.replaceAll("&lt;", "<")
		.replaceAll("&gt;", ">")
		.replaceAll("&quot;", '"')
		.replaceAll("&apos;", "'")
		.replaceAll("&amp;", "&");
}

/** The ProgramArguments of a plist as launchdPlist wrote it, or undefined. */
export function plistArgv(text: string): string[] | undefined {
	const array = /<key>ProgramArguments<\/key>\s*<array>([\s\S]*?)<\/array>/.exec(text)?.[1];
	if (array === undefined) return undefined;
	return [...array.matchAll(/<string>([\s\S]*?)<\/string>/g)].map((m) => xmlUnescape(m[1]!));
}
