// The machines domain on the context (`ctx.machines`): pairing, credentials, the control channel, revocation, machine
// choice and Planner assignments, and the events and checks the agent endpoint uses.
import type { Clock, Timer } from "@chopin/agent-link/clock";
import type { MachineServerMessage, RunState } from "@chopin/agent-link/machine";
import type { Identity } from "../auth/identity";
import type { Config } from "../config";
import type { Domain } from "../domain";
import type { Logger } from "../log";
import type { Store } from "../store/store";
import { Assignments, type Withdrawal } from "./assignments";
import { MachineAuthorizations } from "./authorizations";
import { type Choice, chooseMachine } from "./choice";
import type { VersionPolicy } from "./client-version";
import { ContactWrites } from "./contact-writes";
import { ControlChannel, type RunClientMessage } from "./control";
import { ControlHost } from "./control-host";
import { CredentialCache } from "./credential-cache";
import { machineReauthorize, machineRevoked } from "./errors";
import { MachineAuth } from "./machine-auth";
import { getMachine, listByOwner, type Machine, markReauthorize, revokeMachine } from "./machine-rows";
import { type MachineView, toMachineView } from "./machine-view";
import { Pairings } from "./pairings";
import { PlannerAccess } from "./planner-access";
import { PlannerCredentials } from "./planner-credentials";
import { PlannerUsage } from "./planner-usage";

/** Expired Planner credentials and pairings are swept, and unused assignments withdrawn, this often. */
export const SWEEP_EVERY_MS = 60_000;

export type RevokeReason = "revoked" | "reauthorize";

export interface MachinesDeps {
	/** The context's config, read when needed: publicUrl is final only once the server listens. */
	config(): Config;
	clock: Clock;
	log: Logger;
	store: Store;
	identity: Identity;
	domain: Domain;
	version: string;
}

type Listener<A extends unknown[]> = (...args: A) => void;

export type { RunClientMessage };

/**
 * What handles a machine's builds and investigations (the builds domain, through machine-builds.ts). Each is
 * awaited before the connection's next message is handled.
 */
export interface MachineRunHandler {
	/** The machine said hello and was welcomed: the runs it says it holds. */
	ready(machineId: string, runs: RunState[]): Promise<void>;
	/** A report's runs (the machine's complete list). */
	reported(machineId: string, runs: RunState[]): Promise<void>;
	/** A run-claim, run-status, run-log or run-control-result. */
	message(machineId: string, message: RunClientMessage): Promise<void>;
}

export class Machines {
	readonly authorizations: MachineAuthorizations;
	readonly auth: MachineAuth;
	/** Machines' last contact from HTTP calls, written in batches (contact-writes.ts). */
	readonly contacts: ContactWrites;
	readonly pairings: Pairings;
	readonly plannerCredentials: PlannerCredentials;
	readonly planners: PlannerAccess;
	readonly control: ControlChannel;
	readonly assignments: Assignments;
	readonly usage: PlannerUsage;
	readonly #deps: MachinesDeps;
	readonly #log: Logger;
	readonly #revoked = new Set<Listener<[string, RevokeReason]>>();
	readonly #withdrawn = new Set<Listener<[Withdrawal]>>();
	readonly #changed = new Set<Listener<[string]>>();
	readonly #pending = new Set<Promise<unknown>>();
	#timer: Timer | undefined;
	#runs: MachineRunHandler | undefined;
	#unsubscribe: (() => void) | undefined;
	#stopped = false;
	/**
	 * Valid credentials already checked (credential-cache.ts): every write that could make one wrong, here
	 * or anywhere else in this process, goes through its change().
	 */
	readonly credentialCache = new CredentialCache();

	constructor(deps: MachinesDeps) {
		this.#deps = deps;
		const { store, clock, identity } = deps;
		const log = deps.log.child({ component: "machines" });
		this.#log = log;
		const versionPolicy = (): VersionPolicy => ({
			minVersion: deps.config().machines.minCliVersion,
			serverVersion: deps.version,
			origin: deps.config().publicUrl,
		});
		const publicUrl = () => deps.config().publicUrl;
		this.authorizations = new MachineAuthorizations({
			store,
			identity,
			clock,
			log,
			onEnded: (id) => this.#background(this.#reauthorize(id)),
		});
		this.contacts = new ContactWrites({ store, clock, log });
		this.auth = new MachineAuth({
			store,
			clock,
			versionPolicy,
			cache: this.credentialCache,
			authorizations: this.authorizations,
			contacts: this.contacts,
		});
		this.pairings = new Pairings({
			store,
			clock,
			log,
			identity,
			authorizations: this.authorizations,
			publicUrl,
			versionPolicy,
			onMachineCreated: (id) => this.#emitChanged(id),
		});
		this.plannerCredentials = new PlannerCredentials({ store, clock, cache: this.credentialCache });
		this.planners = new PlannerAccess({
			clock,
			identity,
			documents: deps.domain.documents,
			authorizations: this.authorizations,
			credentials: this.plannerCredentials,
			settings: () => {
				const c = deps.config();
				return { ...c, localPlannerCredentials: c.machines.localPlannerCredentials };
			},
		});
		this.assignments = new Assignments({
			store,
			clock,
			log,
			publicUrl,
			changed: (id) => this.#background(this.#sendPlanners(id)),
			withdrawn: (w) => this.#onWithdrawn(w),
			isBusy: (documentId) => this.usage.isBusy(documentId),
		});
		this.usage = new PlannerUsage({
			store,
			clock,
			log,
			documents: deps.domain.documents,
			assignments: this.assignments,
			online: (id) => this.control.isOnline(id),
		});
		const host = new ControlHost({
			store,
			clock,
			log,
			identity,
			authorizations: this.authorizations,
			assignments: this.assignments,
			credentials: this.plannerCredentials,
			usage: this.usage,
			changed: (id) => this.#emitChanged(id),
		});
		this.control = new ControlChannel({
			clock,
			log,
			auth: this.auth,
			settings: () => {
				const c = deps.config();
				return {
					agent: c.agent,
					pingMs: c.agentConnection.pingMs,
					timeoutMs: c.agentConnection.timeoutMs,
					maxSilenceMs: c.agentConnection.maxSilenceMs,
					publicUrl: c.publicUrl,
					versionPolicy: versionPolicy(),
					hellosInFlight: c.machines.hellosInFlight,
				};
			},
			hello: (connection, hello) => host.hello(connection, hello),
			ready: async (connection, hello) => {
				if (connection.plannersDirty) this.#background(this.#sendPlanners(connection.machineId));
				this.#emitChanged(connection.machineId);
				await this.#runs?.ready(connection.machineId, hello.runs);
			},
			report: async (connection, state) => {
				await host.report(connection, state);
				await this.#runs?.reported(connection.machineId, state.runs);
			},
			plannerEvent: (connection, event) => host.plannerEvent(connection, event),
			run: async (connection, message) => {
				await this.#runs?.message(connection.machineId, message);
			},
			offline: (id) => this.#background(host.offline(id)),
		});
	}

	/** Starts the sweeps and follows document deletions and archiving. */
	start(): void {
		this.#unsubscribe = this.#deps.domain.hub.subscribeAll((documentId, event) => {
			if (event.type !== "document.updated") return;
			if (event.change === "deleted") this.#background(this.#documentGone(documentId, "deleted"));
			if (event.change === "archived") this.#background(this.#documentGone(documentId, "archived"));
		});
		this.#schedule();
	}

	/** At server stop: sweeps end, and every machine hears `restarting` and is closed with 1012. */
	async stop(): Promise<void> {
		this.#stopped = true;
		this.#timer?.cancel();
		this.#unsubscribe?.();
		this.control.stop(this.#deps.config().handoverPlannerWindowMs);
		while (this.#pending.size) await Promise.allSettled([...this.#pending]);
		// Before the store closes: the contact noted since the last batch is written too.
		await this.contacts.stop();
	}

	/** Runs one round of the periodic sweeps now (tests call it; the timer does too). */
	async sweep(): Promise<{ credentials: number; machines: number; withdrawn: Withdrawal[] }> {
		const credentials = await this.plannerCredentials.sweep();
		const machines = await this.pairings.sweep();
		const withdrawn = await this.assignments.sweepUnused();
		return { credentials, machines, withdrawn };
	}

	// --- for the agent endpoint -------------------------------------------------------------

	/** The machine was revoked (or its authorization ended): end every link its Planner credentials attached. */
	onRevoked(fn: (machineId: string, reason: RevokeReason) => void): () => void {
		this.#revoked.add(fn);
		return () => this.#revoked.delete(fn);
	}

	/** A document is no longer asked of a machine (moved, unused, revoked...): end its link with access-revoked. */
	onWithdrawn(fn: (withdrawal: Withdrawal) => void): () => void {
		this.#withdrawn.add(fn);
		return () => this.#withdrawn.delete(fn);
	}

	/** A machine's state changed (paired, online, offline, reported, revoked): for the Machines page. */
	onChange(fn: (machineId: string) => void): () => void {
		this.#changed.add(fn);
		return () => this.#changed.delete(fn);
	}

	/** See PlannerAccess.verify: the agent endpoint's check of a `chopin_p_` bearer. */
	verifyPlannerCredential(token: string) {
		return this.planners.verify(token);
	}

	/** See PlannerUsage.request: assign the document's Planner to the chosen machine. */
	requestPlanner(documentId: string, options: { by?: string } = {}) {
		return this.usage.request(documentId, options);
	}

	/** The document was used: its 30 minutes before withdrawal start again. */
	markUsed(documentId: string): void {
		this.assignments.markUsed(documentId);
	}

	/** Whether the document is in use (an open question, a live run, or what an added check says). */
	isBusy(documentId: string): Promise<boolean> {
		return this.usage.isBusy(documentId);
	}

	/** What the document's machine last said of its Planner backend (for "Can't connect to @login's machine: <reason>"). */
	plannerActivity(documentId: string) {
		return this.usage.activity(documentId);
	}

	/** The document's Planner attached: its backend's exits in a row start again from none. */
	plannerAttached(documentId: string): void {
		this.usage.attached(documentId);
	}

	/** Adds a check of whether a document is busy (a reply in progress): busy documents are never withdrawn. */
	addBusyCheck(check: (documentId: string) => boolean | Promise<boolean>): () => void {
		return this.usage.addBusyCheck(check);
	}

	// --- for the builds domain ----------------------------------------------------------------

	/** Plugs in what handles the machines' runs; returns its removal. */
	setRunHandler(handler: MachineRunHandler): () => void {
		this.#runs = handler;
		return () => {
			if (this.#runs === handler) this.#runs = undefined;
		};
	}

	/** Sends to the machine's control channel; false when it is not online. */
	send(machineId: string, message: MachineServerMessage): boolean {
		return this.control.send(machineId, message);
	}

	/** Whether the machine has a control channel that said hello. */
	isOnline(machineId: string): boolean {
		return this.control.isOnline(machineId);
	}

	/** The machine's row as stored (revoked or not), or undefined. */
	machine(machineId: string): Promise<Machine | undefined> {
		return getMachine(this.#deps.store, machineId);
	}

	/** The person's choice of machine for a document (choice.ts): an override or pin even when offline. */
	choose(login: string, documentId: string, repository: string): Promise<Choice | undefined> {
		return chooseMachine(this.#deps.store, { login, documentId, repository }, (id) => this.isOnline(id));
	}

	// --- revocation ----------------------------------------------------------------------------

	/**
	 * Revokes a machine (idempotent): later calls with its credential get machine-revoked, its
	 * control channel hears `revoked` and closes 4410, its Planner credentials, authorization,
	 * assignments and choices go, and onRevoked listeners hear it.
	 */
	async revoke(machineId: string): Promise<void> {
		const { store, clock } = this.#deps;
		const changed = await this.credentialCache.change({ machineId }, () =>
			revokeMachine(store, machineId, clock.now()),
		);
		// Listeners first: the links the machine attached end saying it was disconnected, before the
		// withdrawals below would end them with a vaguer sentence.
		if (changed) this.#emitRevoked(machineId, "revoked");
		await this.authorizations.remove(store, machineId);
		await this.plannerCredentials.deleteForMachine(machineId);
		await this.assignments.withdrawMachine(machineId, "revoked");
		await store.sql`DELETE FROM machine_repository_pins WHERE machine_id = ${machineId}`;
		await store.sql`DELETE FROM machine_document_overrides WHERE machine_id = ${machineId}`;
		this.auth.forget(machineId);
		this.control.refuse(machineId, machineRevoked());
		if (!changed) return;
		this.#log.info("machine revoked", { machine: machineId });
		this.#emitChanged(machineId);
	}

	// --- for the pages ----------------------------------------------------------------------

	/** A person's machines as the Machines page shows them. */
	async list(login: string): Promise<MachineView[]> {
		const machines = await listByOwner(this.#deps.store, login);
		return Promise.all(machines.map((m) => this.#view(m)));
	}

	/** One of the person's machines, or undefined when they have no such machine. */
	async view(machineId: string, login: string): Promise<MachineView | undefined> {
		const machine = await getMachine(this.#deps.store, machineId);
		if (!machine?.claimed || machine.revokedAt !== null) return undefined;
		if (machine.owner.toLowerCase() !== login.toLowerCase()) return undefined;
		return this.#view(machine);
	}

	async #view(machine: Awaited<ReturnType<typeof getMachine>> & object): Promise<MachineView> {
		const { clock, config } = this.#deps;
		const assigned = await this.assignments.forMachine(machine.id);
		return toMachineView(machine, {
			online: this.control.isOnline(machine.id),
			now: clock.now(),
			graceMs: config().machines.offlineGraceMs,
			assigned: assigned.map((a) => a.document.id),
		});
	}

	// --- internals ------------------------------------------------------------------------------

	async #reauthorize(machineId: string): Promise<void> {
		const { store } = this.#deps;
		if (this.#stopped) return;
		const machine = await getMachine(store, machineId);
		if (!machine || machine.revokedAt !== null) return;
		const changed = await this.credentialCache.change({ machineId }, () => markReauthorize(store, machineId));
		if (changed) this.#emitRevoked(machineId, "reauthorize");
		await this.plannerCredentials.deleteForMachine(machineId);
		await this.assignments.withdrawMachine(machineId, "access-lost");
		this.control.refuse(machineId, machineReauthorize(machine.owner));
		if (!changed) return;
		this.#log.info("machine must be paired again: its authorization ended", { machine: machineId });
		this.#emitChanged(machineId);
	}

	async #documentGone(documentId: string, reason: "deleted" | "archived"): Promise<void> {
		if (reason === "deleted") await this.plannerCredentials.deleteForDocument(documentId);
		await this.assignments.withdraw(documentId, reason);
	}

	async #sendPlanners(machineId: string): Promise<void> {
		const connection = this.control.connection(machineId);
		if (connection?.state === "awaiting-hello") connection.plannersDirty = true;
		if (connection?.state !== "ready") return;
		const planners = await this.assignments.forMachine(machineId);
		this.control.send(machineId, { type: "planners", planners });
	}

	#onWithdrawn(withdrawal: Withdrawal): void {
		// The machine stops that Planner: its credentials for the document go now, not in 15 minutes.
		this.#background(this.plannerCredentials.deleteForMachine(withdrawal.machineId, withdrawal.documentId));
		for (const fn of this.#withdrawn) this.#call(() => fn(withdrawal));
	}

	#emitRevoked(machineId: string, reason: RevokeReason): void {
		for (const fn of this.#revoked) this.#call(() => fn(machineId, reason));
	}

	#emitChanged(machineId: string): void {
		for (const fn of this.#changed) this.#call(() => fn(machineId));
	}

	#schedule(): void {
		if (this.#stopped) return;
		this.#timer = this.#deps.clock.setTimeout(() => {
			this.#background(
				this.sweep()
					.then(({ credentials, machines, withdrawn }) => {
						if (credentials || machines || withdrawn.length)
							this.#log.info("machines swept", { credentials, machines, withdrawn: withdrawn.length });
					})
					.finally(() => this.#schedule()),
			);
		}, SWEEP_EVERY_MS);
	}

	#background(work: Promise<unknown>): void {
		const tracked = work
			.catch((error: unknown) => this.#log.error("machines background work failed", { error }))
			.finally(() => this.#pending.delete(tracked));
		this.#pending.add(tracked);
	}

	/**
	 * Resolves once background work started so far (sends, sweeps, reauthorizations) and the messages
	 * the control channels have read so far are handled.
	 */
	async settled(): Promise<void> {
		await this.control.settled();
		while (this.#pending.size) await Promise.allSettled([...this.#pending]);
	}

	#call(fn: () => void): void {
		try {
			fn();
		} catch (error) {
			this.#log.error("a machines listener failed", { error });
		}
	}
}
