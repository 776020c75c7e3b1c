/**
 * How fast the compiled chopin starts, against `bun -e 0` measured in the same run (target: at
 * most 1.3x). Hyperfine-like: warm-up runs, then the commands interleaved run after run so a
 * busy moment on the machine hits them all alike; median, p90, mean and spread per command, and the median CPU
 * time (user + system), which moves less with other processes' load.
 * Not a test: it prints its figures.
 *
 *   bun bench/cli-startup.ts [--runs 40] [--warmup 5] [--binary path/to/chopin] [--format esm|cjs]
 *
 * Without --binary it compiles this machine's target into bench/.out/ with the release flags
 * (ESM bytecode split into chunks; `--format cjs` compiles one CommonJS bytecode bundle instead, for
 * comparison). Two programs are compiled alongside, as references: a trivial one (the floor any
 * `bun build --compile` binary starts at), and the least any status must do in one file (its
 * directories, the credential and config read, the daemon's socket tried, a report printed), so
 * that what is left above it is the cost of chopin's structure.
 *
 * `chopin status --json` is timed twice: not paired (temp state, no daemon: exit 3), and paired
 * with its daemon running and connected (a real local server, the compiled `chopin run`: exit 0).
 *
 * With Node.js and npm here, the binary is also packed and installed with `npm install -g` twice (bench/npm-installs.ts):
 * `chopin --version` and `status --json` are timed through the JS shim (--ignore-scripts) and through the bin/chopin
 * that install.js made the binary, each as a ratio to the binary run directly in the same run, with its peak memory.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startMachineServer } from "../apps/cli/src/testing/machine-server";
import { COMPILE_FLAGS, compileTarget, ROOT } from "../scripts/build-cli";
import { hostTarget } from "../scripts/release/targets";
import { npmInstalls } from "./npm-installs";
import { type PairedDaemon, startPairedDaemons, stopPairedDaemons } from "./paired-daemons";
import { writeStatusFloor } from "./status-floor";

const TARGET_RATIO = 1.3;

const { values } = parseArgs({
	args: Bun.argv.slice(2),
	options: {
		runs: { type: "string", default: "40" },
		warmup: { type: "string", default: "5" },
		binary: { type: "string" },
		format: { type: "string", default: "esm" },
	},
});
const runs = Number(values.runs);
const warmup = Number(values.warmup);
if (values.format !== "esm" && values.format !== "cjs") throw new Error("--format is esm or cjs");

const out = join(ROOT, "bench", ".out");
mkdirSync(out, { recursive: true });
const target = hostTarget();
if (!target) throw new Error(`chopin is not built for ${process.platform}-${process.arch}`);

async function compile(entry: string, name: string): Promise<string> {
	// CommonJS cannot be split.
	const flags =
		values.format === "esm"
			? COMPILE_FLAGS
			: COMPILE_FLAGS.filter((f) => f !== "--splitting").map((f) =>
					f === "--format=esm" ? "--format=cjs" : f,
				);
	const dir = join(out, name);
	mkdirSync(dir, { recursive: true });
	return compileTarget(target!, dir, { entry, flags });
}

process.stderr.write(`compiling (${values.format === "esm" ? "split ESM" : "CommonJS"} bytecode)...\n`);
const chopin = values.binary ?? (await compile(join(ROOT, "apps/cli/src/main.ts"), "chopin"));
const trivialEntry = join(out, "trivial.ts");
writeFileSync(trivialEntry, 'console.log("0.0.0");\n');
const trivial = await compile(trivialEntry, "trivial");
const floor = await compile(writeStatusFloor(out), "status-floor");

// Not paired: an empty home, and chopin's directories found the way a user's are (no XDG_* or CHOPIN_* overrides).
const state = mkdtempSync(join(tmpdir(), "chopin-bench-"));
const env: Record<string, string | undefined> = { ...process.env, HOME: state };
for (const name of ["XDG_DATA_HOME", "XDG_CONFIG_HOME", "CHOPIN_STATE_DIR", "CHOPIN_CONFIG_DIR"])
	delete env[name];

// Paired with a real local server, its daemon (the compiled binary) running and connected.
const machines = await startMachineServer({ env: { LOG_LEVEL: "warn" } });
const daemons: PairedDaemon[] = [];
await startPairedDaemons(machines, [chopin], daemons);
const home = daemons[0]!;

const npm = await npmInstalls(chopin, target);

const commands: { name: string; argv: string[]; expect: number; env?: Record<string, string> }[] = [
	{ name: "bun -e 0", argv: [process.execPath, "-e", "0"], expect: 0 },
	{ name: "trivial compiled binary", argv: [trivial], expect: 0 },
	{ name: "status floor (one file)", argv: [floor], expect: 3 },
	{ name: "chopin --version", argv: [chopin, "--version"], expect: 0 },
	// Not paired: status exits 3, after reading the state and asking for a daemon.
	{ name: "chopin status --json", argv: [chopin, "status", "--json"], expect: 3 },
	{ name: "  paired, daemon connected", argv: [chopin, "status", "--json"], expect: 0, env: home.env },
	// The same one-file floor, paired: it also hashes the two files, asks the daemon and waits for its answer.
	{ name: "  its floor (one file)", argv: [floor], expect: 0, env: home.env },
	...(npm
		? [
				{ name: "npm shim: --version", argv: [npm.shim, "--version"], expect: 0 },
				{ name: "npm shim: status --json", argv: [npm.shim, "status", "--json"], expect: 3 },
				{ name: "npm bin: --version", argv: [npm.direct, "--version"], expect: 0 },
				{ name: "npm bin: status --json", argv: [npm.direct, "status", "--json"], expect: 3 },
			]
		: []),
];
/**
 * Peak resident memory in MiB of the command (of the largest process, shim or binary), by GNU time's %M over a few
 * runs: Bun's own resourceUsage.maxRSS counts the forked copy of this process before the exec. Undefined without it.
 */
function peakMiB(argv: string[]): number | undefined {
	const time = "/usr/bin/time";
	if (!Bun.file(time).size) return undefined;
	const file = join(state, "peak.txt");
	const peaks: number[] = [];
	for (let i = 0; i < 5; i++) {
		Bun.spawnSync([time, "-f", "%M", "-o", file, ...argv], { env, stdout: "ignore", stderr: "ignore" });
		peaks.push(Number(readFileSync(file, "utf8").trim().split("\n").at(-1)) / 1024);
	}
	return peaks.sort((a, b) => a - b)[2];
}

/** One run: its wall time, and its CPU time (user + system), which moves less with the load of other processes. */
function once(
	argv: string[],
	expected: number,
	commandEnv: Record<string, string | undefined> = env,
): { ms: number; cpuMs: number } {
	const start = performance.now();
	const result = Bun.spawnSync(argv, {
		env: commandEnv,
		stdin: "ignore",
		stdout: "ignore",
		stderr: "pipe",
	});
	const ms = performance.now() - start;
	if (result.exitCode !== expected)
		throw new Error(
			`${argv.join(" ")} exited ${result.exitCode}, not ${expected}: ${result.stderr.toString().trim()}`,
		);
	return { ms, cpuMs: Number(result.resourceUsage.cpuTime.total) / 1000 };
}

try {
	// The daemon is connected once status says so (exit 0); that first status also records the files it checked.
	const deadline = Date.now() + 20_000;
	while (
		Bun.spawnSync([chopin, "status", "--json"], { env: home.env, stdout: "ignore", stderr: "ignore" })
			.exitCode !== 0
	) {
		if (Date.now() > deadline) throw new Error("the daemon did not connect within 20 s");
		await Bun.sleep(100);
	}
	// The local server runs in this process: between runs the event loop turns, so that it answers the daemon's pings
	// (spawnSync blocks it, and 30 runs of every command outlast the daemon's patience with a silent server).
	for (let i = 0; i < warmup; i++)
		for (const c of commands) {
			once(c.argv, c.expect, c.env);
			await Bun.sleep(0);
		}
	const times = new Map(commands.map((c) => [c.name, [] as number[]]));
	const cpuTimes = new Map(commands.map((c) => [c.name, [] as number[]]));
	for (let i = 0; i < runs; i++)
		for (const c of commands) {
			const { ms, cpuMs } = once(c.argv, c.expect, c.env);
			times.get(c.name)!.push(ms);
			cpuTimes.get(c.name)!.push(cpuMs);
			await Bun.sleep(0);
		}

	const stats = (ms: number[]) => {
		const sorted = [...ms].sort((a, b) => a - b);
		const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
		const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
		const sd = Math.sqrt(ms.reduce((a, b) => a + (b - mean) ** 2, 0) / ms.length);
		return { median: at(0.5), p90: at(0.9), min: sorted[0]!, mean, sd };
	};
	const base = stats(times.get("bun -e 0")!);
	const cpuBase = stats(cpuTimes.get("bun -e 0")!);
	console.log(
		`chopin start-up, ${runs} runs each after ${warmup} warm-up, ${values.format === "esm" ? "split ESM" : "CommonJS"} bytecode (${chopin})\n`,
	);
	console.log(
		`${"command".padEnd(26)}${"median".padStart(9)}${"p90".padStart(9)}${"min".padStart(9)}${"mean ± sd".padStart(17)}${"x median".padStart(10)}${"x p90".padStart(8)}${"cpu med".padStart(10)}${"x cpu".padStart(8)}`,
	);
	const ms = (n: number) => `${n.toFixed(1)}ms`;
	for (const c of commands) {
		const s = stats(times.get(c.name)!);
		const cpu = stats(cpuTimes.get(c.name)!);
		console.log(
			`${c.name.padEnd(26)}${ms(s.median).padStart(9)}${ms(s.p90).padStart(9)}${ms(s.min).padStart(9)}${`${ms(s.mean)} ± ${s.sd.toFixed(1)}`.padStart(17)}${(s.median / base.median).toFixed(2).padStart(10)}${(s.p90 / base.p90).toFixed(2).padStart(8)}${ms(cpu.median).padStart(10)}${(cpu.median / cpuBase.median).toFixed(2).padStart(8)}`,
		);
	}
	console.log("");
	for (const name of ["chopin --version", "chopin status --json", "  paired, daemon connected"]) {
		const ratio = stats(times.get(name)!).median / base.median;
		const cpuRatio = stats(cpuTimes.get(name)!).median / cpuBase.median;
		console.log(
			`${name}: ${ratio.toFixed(2)}x bun -e 0 (target ≤ ${TARGET_RATIO}x): ${ratio <= TARGET_RATIO ? "met" : "over"}; by CPU time ${cpuRatio.toFixed(2)}x`,
		);
	}
	if (npm) {
		console.log("");
		const median = (name: string) => stats(times.get(name)!).median;
		const peak = (argv: string[]) => {
			const mib = peakMiB(argv);
			return mib === undefined ? "?" : `${mib.toFixed(0)} MiB`;
		};
		for (const [label, args] of [
			["--version", ["--version"]],
			["status --json", ["status", "--json"]],
		] as const) {
			const ratio = (name: string) =>
				(median(name) / median(label === "--version" ? "chopin --version" : "chopin status --json")).toFixed(
					2,
				);
			console.log(
				`${label} through npm: the JS shim ${ratio(`npm shim: ${label}`)}x the binary run directly, the bin install.js ` +
					`made ${ratio(`npm bin: ${label}`)}x; peak memory ${peak([npm.shim, ...args])} through the shim, ` +
					`${peak([npm.direct, ...args])} through the bin, ${peak([chopin, ...args])} directly`,
			);
		}
	}
	const trivialMedian = stats(times.get("trivial compiled binary")!).median;
	const version = stats(times.get("chopin --version")!).median;
	const statusFloor = stats(times.get("status floor (one file)")!).median;
	const status = stats(times.get("chopin status --json")!).median;
	const pairedFloor = stats(times.get("  its floor (one file)")!).median;
	const paired = stats(times.get("  paired, daemon connected")!).median;
	console.log(
		`above a trivial compiled binary, chopin --version spends ${(version - trivialMedian).toFixed(1)}ms of its own`,
	);
	console.log(
		`a one-file status is ${(statusFloor / base.median).toFixed(2)}x bun -e 0; chopin's status spends ${(status - statusFloor).toFixed(1)}ms above it`,
	);
	console.log(
		`paired, a one-file status is ${(pairedFloor / base.median).toFixed(2)}x bun -e 0 (the daemon's answer included); chopin's spends ${(paired - pairedFloor).toFixed(1)}ms above it`,
	);
} finally {
	await stopPairedDaemons(daemons);
	await machines.server.close();
	rmSync(state, { recursive: true, force: true });
	npm?.remove();
}
