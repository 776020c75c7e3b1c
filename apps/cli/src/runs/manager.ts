// The daemon's runs: offers claimed (once, by the server's answer), each claimed run started, a person's stop,
// resume or discard carried out and answered, every live run paused the moment the control channel drops, and
// all of them stopped with the daemon. Only the server's offers start anything: nothing is replayed from disk.
import type {
	MachineClientMessage,
	MachineServerMessage,
	RunnerReport,
	RunOffer,
	RunState,
} from "@chopin/agent-link/machine";
import type { Logger } from "../local/log";
import type { MachineRun } from "./run";

/** Ended runs kept in hello and report (so a final status that crossed a drop still reaches the server). */
export const ENDED_KEPT = 32;

type RunMessage = Extract<
	MachineServerMessage,
	{ type: "run-offer" | "run-claimed" | "run-refused" | "run-withdrawn" | "run-control" }
>;

export interface RunManagerOptions {
	log: Logger;
	/** Why this machine cannot run builds (no ACP command); undefined when it can. */
	unavailable: string | undefined;
	send(message: MachineClientMessage): boolean;
	/** The state changed: report it. */
	report(): void;
	/** Makes (does not start) a claimed run. */
	create(offer: RunOffer, token: string): MachineRun;
	/** Registers a run credential as a secret, before anything could print it. */
	secret(token: string): void;
	/** The daemon is done with runs (the terminal is no longer read). */
	close?(): void;
	/** Deletes an ended run's workspace and record (a person discarded it); false when there was none. */
	removeWorkspace(runId: string): Promise<boolean>;
}

export class RunManager {
	readonly #o: RunManagerOptions;
	/** Offers claimed and not yet answered. */
	readonly #claiming = new Map<string, RunOffer>();
	readonly #runs = new Map<string, MachineRun>();
	readonly #running = new Set<Promise<void>>();
	#stopping = false;

	constructor(options: RunManagerOptions) {
		this.#o = options;
	}

	static isRunMessage(message: MachineServerMessage): message is RunMessage {
		return message.type.startsWith("run-");
	}

	/** Whether builds can run here, for hello and report. */
	runner(): RunnerReport {
		const reason = this.#o.unavailable;
		return reason === undefined ? { available: true } : { available: false, reason };
	}

	/** Every run this daemon holds (live ones, and the most recent ended ones). */
	states(): RunState[] {
		const runs = [...this.#runs.values()];
		const live = runs.filter((r) => !r.ended);
		const ended = runs.filter((r) => r.ended).slice(-ENDED_KEPT);
		return [...live, ...ended].map((r) => r.state());
	}

	runs(): MachineRun[] {
		return [...this.#runs.values()];
	}

	handle(message: RunMessage): void {
		const { log } = this.#o;
		switch (message.type) {
			case "run-offer": {
				const { run } = message;
				if (this.#stopping || this.#runs.has(run.id) || this.#claiming.has(run.id)) return;
				if (this.#o.unavailable !== undefined) {
					log.warn({ run: run.id }, `not claiming a run: ${this.#o.unavailable}`);
					return;
				}
				this.#claiming.set(run.id, run);
				if (!this.#o.send({ type: "run-claim", run: run.id })) this.#claiming.delete(run.id);
				return;
			}
			case "run-claimed": {
				const offer = this.#claiming.get(message.run);
				this.#claiming.delete(message.run);
				this.#o.secret(message.token);
				if (!offer || this.#runs.has(message.run)) return;
				this.#start(offer, message.token);
				return;
			}
			case "run-refused":
				this.#claiming.delete(message.run);
				log.info(
					{ run: message.run, code: message.code },
					`the server did not hand over the run: ${message.message}`,
				);
				return;
			case "run-withdrawn":
				this.#claiming.delete(message.run);
				return;
			case "run-control":
				// Logged as it arrives, so a repeat (or a control that never came) can be told from the log.
				log.debug(
					{ run: message.run, action: message.action, request: message.request },
					"run-control received",
				);
				void this.#control(message);
				return;
		}
	}

	/** The control channel dropped: every live run pauses at once. */
	async channelDown(): Promise<void> {
		// Offers not yet answered are the server's to send again; nothing is claimed blindly.
		this.#claiming.clear();
		await Promise.all([...this.#runs.values()].map((run) => run.pause("the connection to Chopin dropped")));
	}

	/** The channel is back: what the runs logged meanwhile goes out (they stay paused until a person resumes). */
	channelUp(): void {
		for (const run of this.#runs.values()) run.log.flush();
	}

	/** The daemon stops: every process of every run is stopped. */
	async stopAll(reason: string): Promise<void> {
		this.#stopping = true;
		this.#claiming.clear();
		await Promise.all([...this.#runs.values()].map((run) => run.stop(reason)));
		await Promise.allSettled([...this.#running]);
	}

	/** After stopAll: nothing more is asked on the terminal. */
	close(): void {
		this.#o.close?.();
	}

	#start(offer: RunOffer, token: string): void {
		const run = this.#o.create(offer, token);
		this.#runs.set(offer.id, run);
		this.#o.log.info(
			{ run: offer.id, kind: offer.kind, document: offer.document.id },
			`starting the ${offer.kind} ${offer.id}`,
		);
		const done = run
			.start()
			.catch((error) => this.#o.log.error({ run: offer.id, err: error }, "the run failed unexpectedly"))
			.finally(() => {
				this.#running.delete(done);
				this.#forgetOldEnded();
				this.#o.report();
			});
		this.#running.add(done);
		this.#o.report();
	}

	async #control(message: Extract<RunMessage, { type: "run-control" }>): Promise<void> {
		const run = this.#runs.get(message.run);
		const answer = (ok: boolean, text?: string) =>
			this.#o.send({
				type: "run-control-result",
				request: message.request,
				ok,
				...(text && { message: text }),
			});
		try {
			if (message.action === "discard") {
				// Discarded: stopped if it runs, then its workspace deleted (its branches brought back stay in the checkout).
				await run?.stop("a person discarded it");
				this.#runs.delete(message.run);
				const removed = await this.#o.removeWorkspace(message.run);
				answer(true, removed ? undefined : "Nothing of it was left on this machine.");
			} else if (!run) {
				answer(false, `This machine does not hold run ${message.run}.`);
			} else if (message.action === "resume") {
				const result = await run.resume();
				answer(result.ok, result.message);
			} else {
				await run.stop("a person stopped it");
				answer(true);
			}
		} catch (error) {
			this.#o.log.error({ run: message.run, err: error }, `could not ${message.action} the run`);
			answer(false, `Could not ${message.action} it: ${(error as Error).message}`);
		}
		this.#o.report();
	}

	#forgetOldEnded(): void {
		const ended = [...this.#runs.values()].filter((r) => r.ended);
		for (const run of ended.slice(0, Math.max(0, ended.length - ENDED_KEPT))) this.#runs.delete(run.id);
	}
}
