// One launch of a command (a Planner backend, or a run's ACP agent) and every process it ever starts, stopped as one:
// SIGTERM to all of it, the grace period, SIGKILL to whatever is left, in bounded time whatever the processes do.

import type { Clock } from "@chopin/agent-link/clock";
import type { FileSink } from "bun";
import type { Platform } from "../local/paths";
import {
	type Containment,
	type ContainmentMode,
	currentContainment,
	namespacedArgv,
	withPidNamespace,
} from "./containment";
import { addLiveScope, removeLiveScope } from "./live-scopes";
import { isStopped, readProcess, stopPending } from "./process-table";
import {
	findMembers,
	killMembersNow,
	SCOPE_VARIABLE,
	type ScopeIdentity,
	type ScopeMember,
	signalGroup,
	signalProcess,
} from "./scope-members";
import { outputStream, type PipeReader, readPipe, type ScopeStdin, stdinWriter } from "./scope-output";
import { addOwnChild, reapAdopted, removeOwnChild } from "./subreaper";

/** How long a scope has between SIGTERM and SIGKILL (agent-connection.md: 5 seconds). */
export const STOP_GRACE_MS = 5_000;
/** How long the output pipes may stay open once the scope is gone before they are cut (PLATFORM-RUNS c). */
export const PIPE_BOUND_MS = 500;
/**
 * How often the process table is read while waiting for members to go, and how many such reads
 * the kill phase gets (about a second). Real time: these bound how long the kernel takes to end
 * a process, which no clock a test drives can speed up; the grace period is on the injected clock.
 */
const POLL_MS = 25;
const KILL_ROUNDS = 40;
/** Rounds of freeze() and thaw(): about 2 s at most (see #repeatSignal). */
const SIGNAL_ROUNDS = 85;

export interface ScopeExit {
	/** The leader's exit code, or null when a signal ended it or it never started. */
	code: number | null;
	signal: string | null;
	/** The command could not be started at all (not found, not executable, no such cwd). */
	error?: string;
}

export interface ScopeOptions {
	argv: readonly string[];
	cwd: string;
	/** The whole environment (nothing is inherited); CHOPIN_SCOPE=<id> is added. */
	env: Readonly<Record<string, string>>;
	platform: Platform;
	clock: Clock;
	/**
	 * The argv is a bubblewrap sandbox's already (sandbox.ts): in the pid-namespace mode it runs as it
	 * is, with `--unshare-pid --die-with-parent` added if it lacks them, instead of in a second bwrap.
	 */
	namespaced?: boolean;
	/** "pipe": `stdin` is a writer (an ACP agent's JSON-RPC). Default "ignore" (a Planner backend). */
	stdin?: "pipe" | "ignore";
	/** Each stdout chunk as it arrives. Without it, `stdout` is a stream to read instead. */
	onStdout?: (chunk: Uint8Array) => void;
	/** Each stderr chunk as it arrives; without it stderr is read and dropped. */
	onStderr?: (chunk: Uint8Array) => void;
	/** Between SIGTERM and SIGKILL, on `clock` (default 5 s). */
	graceMs?: number;
	/** How to contain it; default: the daemon's choice (setUpContainment), see currentContainment. */
	containment?: Containment;
}

export interface Scope {
	/** Unique per launch: every process of the scope has CHOPIN_SCOPE=<id> in its environment. */
	readonly id: string;
	readonly mode: ContainmentMode;
	/** The process Bun spawned (bwrap in the pid-namespace mode); undefined when it never started. */
	readonly pid: number | undefined;
	/** Resolves when the leader exits (others may live on until stop()). */
	readonly exited: Promise<ScopeExit>;
	/**
	 * Resolves once stdout and stderr are closed and every chunk was handed on: when all writers
	 * closed them, or at the latest PIPE_BOUND_MS after stop() ended the scope (the pipes are cut).
	 */
	readonly closed: Promise<void>;
	/** With `stdin: "pipe"`. */
	readonly stdin: ScopeStdin | undefined;
	/** Without `onStdout`: stdout as a stream, closed with `closed`. */
	readonly stdout: ReadableStream<Uint8Array> | undefined;
	/**
	 * SIGTERM to the group and every member (then SIGCONT, so a frozen one can act), SIGKILL to
	 * whatever is left after the grace period, pipes cut. Resolves within the grace period plus about
	 * a second whatever the processes do; idempotent.
	 */
	stop(): Promise<void>;
	/** SIGSTOP to every member, scanning again until no new member shows up. Nothing on Windows. */
	freeze(): Promise<void>;
	/** SIGCONT to every member. Nothing on Windows. */
	thaw(): Promise<void>;
	/** The live processes of the scope now, the leader first while it lives. */
	members(): ScopeMember[];
}

/** The command that ends a process tree on Windows, where there are no process groups to signal. */
export function windowsKillArgv(pid: number): string[] {
	return ["taskkill", "/T", "/F", "/PID", String(pid)];
}

export function launchScope(options: ScopeOptions): Scope {
	return new LaunchedScope(options);
}

class LaunchedScope implements Scope {
	readonly id = newScopeId();
	readonly mode: ContainmentMode;
	readonly pid: number | undefined;
	readonly exited: Promise<ScopeExit>;
	readonly closed: Promise<void>;
	readonly stdin: ScopeStdin | undefined;
	readonly stdout: ReadableStream<Uint8Array> | undefined;
	readonly #o: ScopeOptions;
	readonly #identity: ScopeIdentity | undefined;
	readonly #pipes: PipeReader[] = [];
	/** Every process ever found in the scope but the leader: never Bun's own child, so reapable once adopted. */
	readonly #seen = new Set<number>();
	#leaderGone = false;
	#ended = false;
	#stopping: Promise<void> | undefined;

	constructor(options: ScopeOptions) {
		this.#o = options;
		const containment = options.containment ?? currentContainment(options.platform);
		this.mode = containment.mode;
		const env: Record<string, string> = { ...options.env, [SCOPE_VARIABLE]: this.id };
		const wrapped = this.mode === "pid-namespace" && !options.namespaced;
		const argv =
			this.mode !== "pid-namespace"
				? [...options.argv]
				: wrapped
					? namespacedArgv(containment.bwrap ?? "bwrap", options.argv)
					: withPidNamespace(options.argv);
		const out = options.onStdout ? undefined : outputStream();
		this.stdout = out?.stream;
		let proc: ReturnType<typeof spawn>;
		try {
			// Inside bwrap a missing command is bwrap's own error line and exit 1: say it as a spawn would.
			if (wrapped) assertCommand(options.argv[0], env.PATH, options.cwd);
			proc = spawn(argv, options, env, this.mode !== "tree");
		} catch (error) {
			out?.close();
			this.#ended = true;
			this.exited = Promise.resolve({ code: null, signal: null, error: (error as Error).message });
			this.closed = Promise.resolve();
			return;
		}
		const pid = proc.pid;
		this.pid = pid;
		addOwnChild(pid);
		this.#identity = {
			id: this.id,
			leader: pid,
			leaderStart: options.platform === "linux" ? (readProcess(pid)?.startTime ?? Number.NaN) : Number.NaN,
			platform: options.platform,
			mode: this.mode,
			leaderGone: () => this.#leaderGone,
		};
		addLiveScope(this.id, () => this.#killNow());
		if (options.stdin === "pipe") this.stdin = stdinWriter(proc.stdin as FileSink);
		const stdoutPipe = readPipe(proc.stdout as ReadableStream<Uint8Array>, options.onStdout ?? out!.push);
		if (out) {
			void stdoutPipe.done.then(out.close);
			out.onCancel(() => void stdoutPipe.cut());
		}
		this.#pipes.push(
			stdoutPipe,
			readPipe(proc.stderr as ReadableStream<Uint8Array>, options.onStderr ?? (() => {})),
		);
		this.closed = Promise.all(this.#pipes.map((p) => p.done)).then(() => {});
		this.exited = proc.exited.then((code) => {
			this.#leaderGone = true;
			removeOwnChild(pid);
			const signal = proc.signalCode === null ? null : String(proc.signalCode);
			return { code: signal ? null : code, signal };
		});
		void this.exited.then(() => this.#afterExit());
	}

	stop(): Promise<void> {
		this.#stopping ??= this.#stop();
		return this.#stopping;
	}

	async freeze(): Promise<void> {
		// A member asleep in D with the SIGSTOP pending stops before it runs again: frozen already.
		await this.#repeatSignal(
			"SIGSTOP",
			(m) => !isStopped(m.state) && !(m.state === "D" && this.#o.platform === "linux" && stopPending(m.pid)),
		);
	}

	async thaw(): Promise<void> {
		await this.#repeatSignal("SIGCONT", (m) => isStopped(m.state));
	}

	members(): ScopeMember[] {
		return this.#identity ? this.#scan() : [];
	}

	/** The leader exited by itself with nothing of the scope left: the pipes get their bound now. */
	async #afterExit(): Promise<void> {
		if (this.#stopping || this.mode === "tree" || this.#scan().length > 0) return;
		this.#end();
		await this.#settlePipes();
	}

	async #stop(): Promise<void> {
		const identity = this.#identity;
		if (!identity) return;
		try {
			if (this.mode === "tree") await this.#stopTree(identity.leader);
			else await this.#stopPosix(identity);
		} finally {
			this.#end();
			await this.#settlePipes();
		}
	}

	async #stopPosix(identity: ScopeIdentity): Promise<void> {
		const members = this.#scan();
		if (this.#leaderGone && members.length === 0) return;
		// One SIGTERM each (a second one means "now" to some programs): the group's members get the group's.
		const termed = new Set<number>();
		// bubblewrap dies of SIGTERM at once and takes its namespace along with no grace: only what runs inside gets it.
		if (this.mode !== "pid-namespace") {
			for (const member of members) if (member.pgid === identity.leader) termed.add(member.pid);
			signalGroup(identity.leader, "SIGTERM");
		}
		// A frozen scope must be able to act on the SIGTERM.
		signalGroup(identity.leader, "SIGCONT");
		if (!(await this.#goneWithin(this.#o.graceMs ?? STOP_GRACE_MS, termed))) await this.#killAll(identity);
		this.#reap();
		await Promise.race([this.exited, Bun.sleep(POLL_MS * KILL_ROUNDS)]);
	}

	/**
	 * Whether the leader and every member are gone before the grace period (on the clock) is over.
	 * Each member not `termed` through the group gets SIGTERM and SIGCONT once, also one found only
	 * now (a fork in flight, or the command bwrap had not started yet).
	 */
	async #goneWithin(graceMs: number, termed: Set<number>): Promise<boolean> {
		const controller = new AbortController();
		let over = false;
		const grace = this.#o.clock.sleep(graceMs, controller.signal).then(
			() => {
				over = true;
			},
			() => {},
		);
		try {
			for (;;) {
				const members = this.#scan();
				if (this.#leaderGone && members.length === 0) return true;
				if (over) return false;
				for (const member of members) {
					// bwrap gone before its namespace's init could follow it (killed during its set-up): the init
					// would wait for the grace period doing nothing, so it goes now, as --die-with-parent meant.
					if (member.wrapper && this.#leaderGone) signalProcess(member.pid, "SIGKILL");
					if (member.wrapper || termed.has(member.pid)) continue;
					termed.add(member.pid);
					signalProcess(member.pid, "SIGTERM");
					signalProcess(member.pid, "SIGCONT");
				}
				this.#reap();
				await Promise.race([Bun.sleep(POLL_MS), grace]);
			}
		} finally {
			controller.abort();
		}
	}

	/** SIGKILL to the group and every member until none is left, for about a second at most. */
	async #killAll(identity: ScopeIdentity): Promise<void> {
		signalGroup(identity.leader, "SIGKILL");
		for (let round = 0; round < KILL_ROUNDS; round++) {
			const members = this.#scan();
			if (members.length === 0 && this.#leaderGone) return;
			for (const member of members) signalProcess(member.pid, "SIGKILL");
			this.#reap();
			await (this.#leaderGone ? Bun.sleep(POLL_MS) : Promise.race([Bun.sleep(POLL_MS), this.exited]));
		}
	}

	/** Windows: taskkill /T /F while the leader lives (its tree is all there is to find). */
	async #stopTree(pid: number): Promise<void> {
		if (!this.#leaderGone) {
			const [bin, ...args] = windowsKillArgv(pid);
			const killer = Bun.spawn([bin!, ...args], { stdio: ["ignore", "ignore", "ignore"], windowsHide: true });
			await Promise.race([killer.exited, Bun.sleep(POLL_MS * KILL_ROUNDS)]);
		}
		await Promise.race([this.exited, Bun.sleep(POLL_MS * KILL_ROUNDS)]);
	}

	/** Sends the signal to the group and to each member that `needs` it, scanning again until none does. */
	async #repeatSignal(signal: NodeJS.Signals, needs: (member: ScopeMember) => boolean): Promise<void> {
		const identity = this.#identity;
		if (!identity || this.mode === "tree" || this.#ended) return;
		signalGroup(identity.leader, signal);
		// Until every member shows the signal's effect: a process in uninterruptible sleep (D, busy disk I/O) takes
		// its SIGSTOP only when it leaves it, which on a loaded machine can take a while. Bounded at about 2 s.
		for (let round = 0; round < SIGNAL_ROUNDS; round++) {
			const pending = this.#scan().filter(needs);
			if (pending.length === 0) return;
			for (const member of pending) signalProcess(member.pid, signal);
			await Bun.sleep(round < 10 ? 5 : POLL_MS);
		}
	}

	/** Once stop() or the leader's exit ended the scope: the pipes get PIPE_BOUND_MS to close, then are cut. */
	async #settlePipes(): Promise<void> {
		let timer: ReturnType<typeof setTimeout> | undefined;
		await Promise.race([
			this.closed,
			new Promise<void>((resolve) => {
				timer = setTimeout(resolve, PIPE_BOUND_MS);
			}),
		]);
		clearTimeout(timer);
		await Promise.all(this.#pipes.map((pipe) => pipe.cut()));
	}

	#scan(): ScopeMember[] {
		const members = findMembers(this.#identity!);
		for (const member of members) if (member.pid !== this.pid) this.#seen.add(member.pid);
		return members;
	}

	/** Reaps the scope's processes this daemon adopted and that have exited (the subreaper mode). */
	#reap(): void {
		if (this.#o.platform !== "linux" || this.#seen.size === 0) return;
		for (const pid of reapAdopted(this.#seen)) this.#seen.delete(pid);
	}

	/** The exit handler's way: SIGKILL to all of it now, synchronously. */
	#killNow(): void {
		if (this.#ended || !this.#identity) return;
		if (this.mode === "tree") {
			if (!this.#leaderGone)
				Bun.spawnSync(windowsKillArgv(this.#identity.leader), { stdio: ["ignore", "ignore", "ignore"] });
			return;
		}
		killMembersNow(this.#identity);
	}

	#end(): void {
		this.#ended = true;
		removeLiveScope(this.id);
	}
}

function spawn(argv: string[], options: ScopeOptions, env: Record<string, string>, detached: boolean) {
	// detached: on POSIX the leader calls setsid, so it leads a new session and process group.
	return Bun.spawn(argv, {
		cwd: options.cwd,
		env,
		detached,
		windowsHide: true,
		stdin: options.stdin === "pipe" ? "pipe" : "ignore",
		stdout: "pipe",
		stderr: "pipe",
	});
}

function assertCommand(command: string | undefined, path: string | undefined, cwd: string): void {
	if (!command) throw new Error("a scope needs a command");
	if (!Bun.which(command, { PATH: path ?? "/usr/bin:/bin", cwd }))
		throw new Error(`ENOENT: no such file or directory, posix_spawn '${command}'`);
}

function newScopeId(): string {
	const bytes = crypto.getRandomValues(new Uint8Array(12));
	return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
