// What the builds modules share: their deps, one queue of changes per run (a claim, a status, a tool's report and a
// person's stop never interleave), views of runs with their machine, the live events, and the timers.
import type { Clock, Timer } from "@chopin/agent-link/clock";
import type { DocumentService } from "../documents/service";
import type { LiveHub } from "../live/hub";
import type { Logger } from "../log";
import type { Store } from "../store/store";
import { type Build, type Control, endBuild, getBuild, liveForMachine, saveControl } from "./build-rows";
import { type BuildView, CONTROL_ANSWER_MS, toBuildView, type ViewMachine } from "./build-view";
import { CREDENTIAL_AFTER_END_MS } from "./credentials";
import type { LogLine } from "./log-lines";
import type { MachinePort } from "./machine-port";
import type { BuildStatus } from "./statuses";

export interface BuildsDeps {
	store: Store;
	clock: Clock;
	log: Logger;
	hub: LiveHub;
	documents: DocumentService;
	/** Read at use: PUBLIC_URL is final once the server listens. */
	settings(): { publicUrl: string; offlineGraceMs: number };
	machines: MachinePort;
}

/** A machine the store no longer knows (it cannot happen while its runs exist; their rows cascade). */
const GONE: Omit<ViewMachine, "id"> = { owner: "", label: "", online: false, lastContactAt: 0 };

export class BuildsCore {
	readonly #chains = new Map<string, Promise<unknown>>();
	readonly #controlTimers = new Map<string, Timer>();
	readonly #pending = new Set<Promise<unknown>>();
	stopped = false;

	constructor(readonly deps: BuildsDeps) {}

	now(): number {
		return this.deps.clock.now();
	}

	/** Runs fn after every change of the run queued before it. */
	serial<T>(buildId: string, fn: () => Promise<T>): Promise<T> {
		const previous = this.#chains.get(buildId) ?? Promise.resolve();
		const next = previous.then(fn, fn);
		const tail = next.catch(() => {});
		this.#chains.set(buildId, tail);
		void tail.then(() => {
			if (this.#chains.get(buildId) === tail) this.#chains.delete(buildId);
		});
		return next;
	}

	async viewMachine(machineId: string): Promise<ViewMachine> {
		const machine = await this.deps.machines.machine(machineId);
		if (!machine) return { id: machineId, ...GONE };
		return {
			id: machine.id,
			owner: machine.owner,
			label: machine.label,
			online: this.deps.machines.online(machine.id),
			lastContactAt: machine.lastContactAt,
		};
	}

	async view(build: Build, viewer?: string): Promise<BuildView> {
		const machine = await this.viewMachine(build.machineId);
		const { offlineGraceMs } = this.deps.settings();
		return toBuildView(build, machine, {
			now: this.now(),
			graceMs: offlineGraceMs,
			...(viewer !== undefined && { viewer }),
		});
	}

	/** Publishes the run as it is now: builds.updated with it whole, or with its id removed once discarded. */
	async publish(buildId: string, options: { removed?: boolean } = {}): Promise<void> {
		const build = await getBuild(this.deps.store, buildId);
		if (!build) return;
		const { hub } = this.deps;
		if (build.discardedAt !== null) {
			if (options.removed)
				hub.publish(build.documentId, {
					type: "builds.updated",
					documentId: build.documentId,
					builds: [],
					removed: [build.id],
				});
			return;
		}
		const view = await this.view(build);
		hub.publish(build.documentId, {
			type: "builds.updated",
			documentId: build.documentId,
			builds: [view],
			removed: [],
		});
	}

	/** Publishes the machine's runs that are not final: its coming and going changes how they show. */
	async publishMachine(machineId: string): Promise<void> {
		const builds = (await liveForMachine(this.deps.store, machineId)).filter((b) => b.discardedAt === null);
		const byDocument = new Map<string, BuildView[]>();
		for (const build of builds) {
			const views = byDocument.get(build.documentId) ?? [];
			views.push(await this.view(build));
			byDocument.set(build.documentId, views);
		}
		for (const [documentId, views] of byDocument) {
			this.deps.hub.publish(documentId, { type: "builds.updated", documentId, builds: views, removed: [] });
		}
	}

	publishLog(build: Build, lines: LogLine[]): void {
		if (lines.length === 0 || build.discardedAt !== null) return;
		this.deps.hub.publish(build.documentId, {
			type: "build.log",
			documentId: build.documentId,
			build: build.id,
			lines,
		});
	}

	/** Ends a run that is not final, once; its credential works 15 minutes more (never past a discard). */
	end(
		build: Build,
		status: BuildStatus,
		fields: { reason?: string | null; workspace?: Build["workspace"] } = {},
	): Promise<boolean> {
		const now = this.now();
		return endBuild(this.deps.store, build.id, {
			status,
			...fields,
			credentialUntil: now + CREDENTIAL_AFTER_END_MS,
			now,
		});
	}

	/** After 10 s without the machine's answer, the control is said to be unconfirmed (a late answer still settles it). */
	armControlTimer(buildId: string, request: string): void {
		this.cancelControlTimer(buildId);
		const timer = this.deps.clock.setTimeout(() => {
			this.#controlTimers.delete(buildId);
			this.background(
				this.serial(buildId, async () => {
					const build = await getBuild(this.deps.store, buildId);
					if (!build?.control || build.controlRequest !== request || build.control.state !== "sent") return;
					const control: Control = { ...build.control, state: "unconfirmed" };
					await saveControl(this.deps.store, buildId, {
						held: build.held,
						request,
						control,
						now: this.now(),
					});
					await this.publish(buildId);
				}),
			);
		}, CONTROL_ANSWER_MS);
		this.#controlTimers.set(buildId, timer);
	}

	cancelControlTimer(buildId: string): void {
		this.#controlTimers.get(buildId)?.cancel();
		this.#controlTimers.delete(buildId);
	}

	/** Runs work no caller waits for; failures are logged. */
	background(work: Promise<unknown>): void {
		const tracked = work
			.catch((error: unknown) => this.deps.log.error("builds background work failed", { error }))
			.finally(() => this.#pending.delete(tracked));
		this.#pending.add(tracked);
	}

	async settled(): Promise<void> {
		while (this.#pending.size || this.#chains.size) {
			await Promise.allSettled([...this.#pending, ...this.#chains.values()]);
		}
	}

	stop(): void {
		this.stopped = true;
		for (const timer of this.#controlTimers.values()) timer.cancel();
		this.#controlTimers.clear();
	}
}
