// The processes a test started, found the way a person would check by hand: by a tag of the test's own in their
// environment (not the connector's CHOPIN_SCOPE), with their command line and state from /proc.
import { readdirSync, readFileSync } from "node:fs";

export const TAG_VARIABLE = "PROCESS_TEST_TAG";

export interface TaggedProcess {
	pid: number;
	ppid: number;
	state: string;
	/** The command line, words joined by spaces. */
	command: string;
}

/** A tag unique to one test, for its processes' environment. */
export function newTag(): string {
	return `t${crypto.randomUUID().replaceAll("-", "")}`;
}

/** Every process whose environment carries the tag, zombies included (these containers' PID 1 never reaps). */
export function taggedProcesses(tag: string): TaggedProcess[] {
	const entry = `${TAG_VARIABLE}=${tag}`;
	const out: TaggedProcess[] = [];
	for (const name of readdirSync("/proc")) {
		if (!/^\d+$/.test(name)) continue;
		try {
			const environ = readFileSync(`/proc/${name}/environ`, "latin1").split("\0");
			if (!environ.includes(entry)) continue;
			const info = procState(Number(name));
			if (!info) continue;
			const command = readFileSync(`/proc/${name}/cmdline`, "latin1").split("\0").join(" ").trim();
			out.push({ pid: Number(name), ...info, command });
		} catch {
			// Gone in between, or not ours to read.
		}
	}
	return out;
}

/** The tagged processes still alive: a zombie has exited and only waits to be reaped. */
export function liveTagged(tag: string): TaggedProcess[] {
	return taggedProcesses(tag).filter((p) => p.state !== "Z" && p.state !== "X");
}

/** A process's state and parent, or undefined once it is gone from /proc (reaped). */
export function procState(pid: number): { state: string; ppid: number } | undefined {
	let text: string;
	try {
		text = readFileSync(`/proc/${pid}/stat`, "utf8");
	} catch {
		return undefined;
	}
	const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
	return { state: fields[0]!, ppid: Number(fields[1]) };
}

/** Whether a pid names a live process (not gone, not a zombie). */
export function isLiveProcess(pid: number): boolean {
	const state = procState(pid)?.state;
	return state !== undefined && state !== "Z" && state !== "X";
}
