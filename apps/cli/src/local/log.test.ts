import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "@chopin/agent-link/clock";
import { capture, makeTempDir } from "../testing/context";
import { type CliLog, createLog, formatLine, logLevelFromEnv } from "./log";
import { Secrets } from "./secrets";

const MACHINE = "chopin_m_AAAAbbbbCCCCddddEEEEffffGGGGhhhhIIIIjjjjKKK";
const PLANNER = "chopin_p_zzzzYYYYxxxxWWWWvvvvUUUUttttSSSSrrrrQQQ";
const GITHUB = "ghs_0123456789abcdefghijABCDEFGHIJ";
const ENV_SECRET = 'p@ss "quoted" \\ and more';

const dirs: string[] = [];
const logs: CliLog[] = [];
afterEach(() => {
	for (const log of logs.splice(0)) log.close();
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup(
	options: { tty?: boolean; maxBytes?: number; keep?: number; echoLevel?: "info" | "warn" } = {},
) {
	const dir = makeTempDir();
	dirs.push(dir);
	const file = join(dir, "state", "logs", "chopin.log");
	const secrets = new Secrets();
	const stderr = capture(options.tty ?? false);
	const clock = new ManualClock(Date.UTC(2026, 0, 2, 3, 4, 5));
	const log = createLog({ file, secrets, clock, stderr, ...options, level: "debug" });
	logs.push(log);
	const lines = () =>
		readFileSync(file, "utf8")
			.trim()
			.split("\n")
			.map((l) => JSON.parse(l) as Record<string, unknown>);
	return { dir, file, secrets, stderr, clock, log, logger: log.logger, lines };
}

describe("the log file", () => {
	test("is created on the first line only, at 0600 in 0700 dirs, as JSON lines with the injected time", async () => {
		const { dir, file, logger, lines, clock } = setup();
		expect(readdirSync(dir)).toEqual([]);
		logger.info({ checkout: "/src/score" }, "serving");
		await clock.advance(1500);
		logger.debug("details");
		expect(statSync(file).mode & 0o777).toBe(0o600);
		expect(statSync(join(file, "..")).mode & 0o777).toBe(0o700);
		const [first, second] = lines();
		expect(first).toMatchObject({
			level: 30,
			time: "2026-01-02T03:04:05.000Z",
			pid: process.pid,
			checkout: "/src/score",
			msg: "serving",
		});
		expect(second).toMatchObject({ level: 20, time: "2026-01-02T03:04:06.500Z", msg: "details" });
		expect(Object.keys(first!)).not.toContain("hostname");
	});

	test("token shapes are masked wherever they appear: message, fields, nested, errors", () => {
		const { file, logger } = setup();
		logger.info({ header: `Bearer ${MACHINE}`, nested: { list: [PLANNER] } }, `using ${GITHUB}`);
		logger.error({ err: new Error(`refused ${MACHINE}`) }, "failed");
		const text = readFileSync(file, "utf8");
		for (const token of [MACHINE, PLANNER, GITHUB]) expect(text).not.toContain(token);
		expect(text).toContain("[redacted]");
		expect(text).toContain("Bearer [redacted]");
	});

	test("secrets added at run time are masked from then on, also as JSON escapes them", () => {
		const { file, logger, secrets } = setup();
		secrets.add(ENV_SECRET);
		secrets.add("plain-secret-value");
		logger.info({ env: { API_KEY: ENV_SECRET } }, "starting with plain-secret-value");
		logger.info(`message holds ${ENV_SECRET}`);
		const text = readFileSync(file, "utf8");
		expect(text).not.toContain("plain-secret-value");
		expect(text).not.toContain(JSON.stringify(ENV_SECRET).slice(1, -1));
		expect(text).not.toContain("quoted");
		expect(text.match(/\[redacted\]/g)?.length).toBe(3);
	});

	test("short secrets are not masked (they would mask everything)", () => {
		const secrets = new Secrets();
		secrets.add("abc");
		secrets.add("");
		secrets.add(undefined);
		expect(secrets.redact("abc abc")).toBe("abc abc");
	});

	test("rotates by size and no token reaches any file", () => {
		const { file, logger, secrets } = setup({ maxBytes: 2048, keep: 3 });
		secrets.add(ENV_SECRET);
		for (let n = 0; n < 200; n++) logger.info({ n, token: MACHINE, env: ENV_SECRET }, `line ${n} ${PLANNER}`);
		const dir = join(file, "..");
		expect(readdirSync(dir).sort()).toEqual(["chopin.log", "chopin.log.1", "chopin.log.2", "chopin.log.3"]);
		for (const name of readdirSync(dir)) {
			const text = readFileSync(join(dir, name), "utf8");
			expect(statSync(join(dir, name)).size).toBeLessThanOrEqual(2048);
			for (const secret of [MACHINE, PLANNER, ENV_SECRET, JSON.stringify(ENV_SECRET).slice(1, -1)]) {
				expect(text).not.toContain(secret);
			}
			for (const l of text.trim().split("\n")) expect(() => JSON.parse(l)).not.toThrow();
		}
		expect(readFileSync(file, "utf8")).toContain('"n":199');
		expect(existsSync(`${file}.4`)).toBe(false);
	});
});

describe("the TTY echo", () => {
	test("a TTY gets one readable, redacted line per entry at or above the echo level", () => {
		const { logger, stderr } = setup({ tty: true });
		logger.debug("not shown");
		logger.info({ checkout: "/src/score", count: 2 }, `connected with ${MACHINE}`);
		logger.warn("slow");
		expect(stderr.text()).toBe(
			"03:04:05 INFO  connected with [redacted] checkout=/src/score count=2\n03:04:05 WARN  slow\n",
		);
	});

	test("the echo level is configurable", () => {
		const { logger, stderr } = setup({ tty: true, echoLevel: "warn" });
		logger.info("quiet");
		logger.error("loud");
		expect(stderr.text()).toBe("03:04:05 ERROR loud\n");
	});

	test("not a TTY (a service): nothing on stderr, the file has it all", () => {
		const { logger, stderr, file } = setup({ tty: false });
		logger.warn("into the file");
		expect(stderr.text()).toBe("");
		expect(readFileSync(file, "utf8")).toContain("into the file");
	});
});

describe("helpers", () => {
	test("logLevelFromEnv", () => {
		expect(logLevelFromEnv(undefined)).toBe("info");
		expect(logLevelFromEnv(" DEBUG ")).toBe("debug");
		expect(logLevelFromEnv("loud")).toBe("info");
	});

	test("formatLine", () => {
		expect(formatLine('{"level":50,"time":"2026-01-01T10:11:12.000Z","pid":1,"msg":"x","a":{"b":1}}')).toBe(
			'10:11:12 ERROR x a={"b":1}\n',
		);
		expect(formatLine('{"level":20,"msg":"x"}', 30)).toBeUndefined();
		expect(formatLine("not json")).toBe("not json\n");
	});
});

describe("a log that cannot be written", () => {
	test("does not fail the command; it says so once on stderr", () => {
		const dir = makeTempDir();
		dirs.push(dir);
		const stderr = capture(false);
		// The log file's path is taken by a directory.
		const file = join(dir, "chopin.log");
		mkdirSync(file);
		const log = createLog({ file, secrets: new Secrets(), clock: new ManualClock(), stderr });
		logs.push(log);
		log.logger.info("one");
		log.logger.info("two");
		expect(stderr.text().split("\n").filter(Boolean)).toHaveLength(1);
		expect(stderr.text()).toStartWith(`chopin: cannot write the log ${file}:`);
	});
});
