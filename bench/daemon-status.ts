/**
 * The daemon's answer to `{"type":"status"}`, as a warm client sees it: one connection per request (as each
 * `chopin status` makes), round trip p50/p90, and the daemon's CPU per request (the sum over its threads of
 * /proc/<pid>/task/<tid>/schedstat, nanoseconds, Linux only; tick-based utime/stime is too coarse for a few
 * milliseconds). Each compiled binary given gets its own paired home and runs its own daemon (`chopin run`) against one
 * local server, so a before and an after are measured in the same run, round after round. Not a test.
 *
 *   bun bench/daemon-status.ts <binary>[,<binary>...] [requests per round, default 100] [rounds, default 3] [gap ms, default 50]
 *
 * The gap between requests stands for the seconds between two statuses: the daemon's code and data go cold in
 * between, and a request after a gap costs it more than one in a tight loop (gap 0).
 */
import { readdirSync, readFileSync } from "node:fs";
import { startMachineServer } from "../apps/cli/src/testing/machine-server";
import { type PairedDaemon, startPairedDaemons, stopPairedDaemons } from "./paired-daemons";

const [binaries, requestsArg, roundsArg, gapArg] = Bun.argv.slice(2);
if (!binaries)
	throw new Error("usage: bun bench/daemon-status.ts <binary>[,<binary>...] [requests] [rounds] [gap ms]");
const requests = Number(requestsArg ?? 100);
const rounds = Number(roundsArg ?? 3);
const gap = Number(gapArg ?? 50);

const machines = await startMachineServer({ env: { LOG_LEVEL: "warn" } });
const setups: PairedDaemon[] = [];

/** One status request on a new connection; resolves with the answer line. */
function ask(socket: string): Promise<string> {
	return new Promise((resolve, reject) => {
		let buffer = "";
		const decoder = new TextDecoder();
		Bun.connect({
			unix: socket,
			socket: {
				open: (s) => void s.write('{"type":"status"}\n'),
				data: (s, chunk) => {
					buffer += decoder.decode(chunk, { stream: true });
					if (buffer.includes("\n")) {
						s.end();
						resolve(buffer);
					}
				},
				error: (_, error) => reject(error),
			},
		}).catch(reject);
	});
}

/** CPU time of every thread of `pid`, in ms. */
function cpuMs(pid: number): number {
	let ns = 0;
	for (const tid of readdirSync(`/proc/${pid}/task`)) {
		try {
			ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
		} catch {
			// The thread ended between the listing and the read.
		}
	}
	return ns / 1e6;
}

try {
	await startPairedDaemons(machines, binaries.split(","), setups);
	for (const { socket } of setups) {
		const deadline = Date.now() + 20_000;
		while (!(await ask(socket).catch(() => "")).includes('"state":"connected"')) {
			if (Date.now() > deadline) throw new Error("a daemon did not connect within 20 s");
			await Bun.sleep(100);
		}
	}
	console.log(
		`${requests} status requests per round, ${gap} ms apart, ${rounds} rounds, interleaved by round\n`,
	);
	for (let round = 0; round < rounds; round++) {
		for (const { binary, socket, daemon } of setups) {
			const times: number[] = [];
			const before = cpuMs(daemon.pid);
			for (let i = 0; i < requests; i++) {
				if (gap) await Bun.sleep(gap);
				const start = performance.now();
				await ask(socket);
				times.push(performance.now() - start);
			}
			const cpu = (cpuMs(daemon.pid) - before) / requests;
			times.sort((a, b) => a - b);
			const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
			const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
			console.log(
				`${binary}: round trip p50 ${at(0.5)} ms, p90 ${at(0.9)} ms; daemon CPU ${cpu.toFixed(2)} ms per request (load ${load})`,
			);
		}
	}
} finally {
	await stopPairedDaemons(setups);
	await machines.server.close();
}
