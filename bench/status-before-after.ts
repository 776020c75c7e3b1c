/**
 * `chopin status --json`, paired and connected, for two or more compiled binaries in the same run: each gets its own
 * paired home and runs its own daemon (its own `chopin run`) against one local server, and the binaries' statuses are
 * interleaved with `bun -e 0`, run after run. Median wall and CPU time (user + system, from spawnSync's resource
 * usage) and their ratios to `bun -e 0` and to the one-file status floor (status-floor.ts, compiled here and run
 * against the first binary's home and daemon): on an idle VM the floor itself moves with the box, so a change is read
 * against it. cli-startup.ts times one binary; this is for a before and an after whose daemons differ too. Not a test.
 *
 *   bun bench/status-before-after.ts <binary>,<binary>[,...] [runs, default 40] [pause ms, default 0]
 *
 * The pause comes before each command: 0 runs them back to back; 1000 leaves the daemons and the box idle between
 * them, as between two statuses a person or a prompt runs. On a virtual machine an idle daemon is slower to wake
 * (docs/performance.md).
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMachineServer } from "../apps/cli/src/testing/machine-server";
import { compileTarget } from "../scripts/build-cli";
import { hostTarget } from "../scripts/release/targets";
import { type PairedDaemon, startPairedDaemons, stopPairedDaemons } from "./paired-daemons";
import { writeStatusFloor } from "./status-floor";

const [binaries, runsArg, pauseArg] = Bun.argv.slice(2);
if (!binaries) throw new Error("usage: bun bench/status-before-after.ts <binary>,<binary>[,...] [runs]");
const runs = Number(runsArg ?? 40);
const pauseMs = Number(pauseArg ?? 0);
const warmup = 3;

const target = hostTarget();
if (!target) throw new Error(`chopin is not built for ${process.platform}-${process.arch}`);
const floorDir = join(tmpdir(), `chopin-status-floor-${process.pid}`);
mkdirSync(floorDir, { recursive: true });
const floor = await compileTarget(target, floorDir, { entry: writeStatusFloor(floorDir) });

const machines = await startMachineServer({ env: { LOG_LEVEL: "warn" } });
const setups: PairedDaemon[] = [];
try {
	await startPairedDaemons(machines, binaries.split(","), setups);
	// Connected once status says so (exit 0); awaited, not spawnSync, so that the server answers meanwhile.
	for (const { binary, env } of setups) {
		const deadline = Date.now() + 20_000;
		while (
			(await Bun.spawn([binary, "status", "--json"], { env, stdout: "ignore", stderr: "ignore" }).exited) !==
			0
		) {
			if (Date.now() > deadline) throw new Error(`${binary}: the daemon did not connect within 20 s`);
			await Bun.sleep(100);
		}
	}
	const commands: { name: string; argv: string[]; env: Record<string, string | undefined> }[] = [
		{ name: "bun -e 0", argv: [process.execPath, "-e", "0"], env: process.env },
		{ name: "status floor (one file)", argv: [floor], env: setups[0]!.env },
		...setups.map(({ binary, env }) => ({ name: binary, argv: [binary, "status", "--json"], env })),
	];
	const wall = new Map(commands.map((c) => [c.name, [] as number[]]));
	const cpu = new Map(commands.map((c) => [c.name, [] as number[]]));
	for (let i = 0; i < warmup + runs; i++) {
		for (const c of commands) {
			if (pauseMs > 0) await Bun.sleep(pauseMs);
			const start = performance.now();
			const result = Bun.spawnSync(c.argv, { env: c.env, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
			const ms = performance.now() - start;
			if (result.exitCode !== 0)
				throw new Error(`${c.name} exited ${result.exitCode}: ${result.stderr.toString().trim()}`);
			if (i >= warmup) {
				wall.get(c.name)!.push(ms);
				cpu.get(c.name)!.push(Number(result.resourceUsage.cpuTime.total) / 1000);
			}
			// The server runs in this process and spawnSync blocks it: let it answer the daemons' pings.
			await Bun.sleep(0);
		}
	}
	const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
	const baseWall = median(wall.get("bun -e 0")!);
	const baseCpu = median(cpu.get("bun -e 0")!);
	const floorWall = median(wall.get("status floor (one file)")!);
	console.log(`${runs} interleaved runs after ${warmup} warm-up, ${pauseMs} ms before each\n`);
	for (const { name } of commands) {
		const w = median(wall.get(name)!);
		const c = median(cpu.get(name)!);
		console.log(
			`${name}: wall ${w.toFixed(1)} ms (${(w / baseWall).toFixed(2)}x, ${(w / floorWall).toFixed(2)}x the floor), CPU ${c.toFixed(1)} ms (${(c / baseCpu).toFixed(2)}x)`,
		);
	}
	console.log(`load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
} finally {
	await stopPairedDaemons(setups);
	await machines.server.close();
	rmSync(floorDir, { recursive: true, force: true });
}
