// What the server does with a machine's control-channel messages: a hello checked and welcomed (or refused),
// reports stored whole, Planner events noted, and a dropped machine marked offline from its last contact.
import type { Clock } from "@chopin/agent-link/clock";
import type { MachineClientMessage, MachineServerMessage } from "@chopin/agent-link/machine";
import { permits } from "../auth/authorization";
import { isIdentityError } from "../auth/errors";
import type { Identity } from "../auth/identity";
import type { Logger } from "../log";
import type { Store } from "../store/store";
import type { Assignments } from "./assignments";
import type { MachineAuthorizations } from "./authorizations";
import type { MachineConnection } from "./connection";
import { type MachineRefusal, machineReauthorize, machineRevoked, repositoryAccessLost } from "./errors";
import { TOUCH_EVERY_MS } from "./machine-auth";
import { getMachine, type MachineState, saveState, touchMachine, uniqueRepositories } from "./machine-rows";
import type { PlannerCredentials } from "./planner-credentials";
import type { PlannerUsage } from "./planner-usage";

type Hello = Extract<MachineClientMessage, { type: "hello" }>;
type PlannerEvent = Extract<MachineClientMessage, { type: "planner-event" }>;
type Welcome = Extract<MachineServerMessage, { type: "welcome" }>;
type Access = Welcome["repositories"][number]["access"];

export interface ControlHostDeps {
	store: Store;
	clock: Clock;
	log: Logger;
	identity: Identity;
	authorizations: MachineAuthorizations;
	assignments: Assignments;
	credentials: PlannerCredentials;
	usage: PlannerUsage;
	changed(machineId: string): void;
}

export class ControlHost {
	constructor(private readonly deps: ControlHostDeps) {}

	/**
	 * Stores the hello's state and checks the machine: revoked (4410), its authorization ended
	 * (4412), or no checkout's repository it may push to any more (4403). Otherwise the welcome:
	 * the machine, each checkout repository's access, and its Planner assignments.
	 */
	async hello(connection: MachineConnection, hello: Hello): Promise<Welcome | MachineRefusal> {
		const { store, clock, assignments } = this.deps;
		const machine = await getMachine(store, connection.machineId);
		if (!machine || machine.revokedAt !== null || !machine.claimed) return machineRevoked();
		if (machine.reauthorize) return machineReauthorize(machine.owner);
		const { type: _type, version: _version, ...state } = hello;
		const now = clock.now();
		// A machine back after a restart usually says what it said a moment ago: nothing to write then
		// (a write per machine is what a reconnect storm would wait on, each a sync of the database).
		const same =
			now - machine.lastContactAt < TOUCH_EVERY_MS &&
			JSON.stringify([
				state.checkouts,
				state.runs,
				state.planners,
				state.sandbox,
				state.runner ?? null,
				connection.client,
			]) ===
				JSON.stringify([
					machine.checkouts,
					machine.runs,
					machine.planners,
					machine.sandbox,
					machine.runner,
					machine.client,
				]);
		if (!same) await saveState(store, machine.id, state, connection.client, now);
		const repositories = uniqueRepositories(state.checkouts);
		const access = await this.#access(machine.id, repositories);
		if (access === "ended") return machineReauthorize(machine.owner);
		if (repositories.length > 0 && access.every((a) => a.access === "forbidden")) {
			this.deps.log.info("machine refused: no repository access", { machine: machine.id });
			return repositoryAccessLost(machine.owner, repositories);
		}
		await this.deps.usage.noteWork(machine.id, state);
		return {
			type: "welcome",
			machine: { id: machine.id, label: machine.label, owner: machine.owner, autoRun: machine.autoRun },
			repositories: access,
			planners: await assignments.forMachine(machine.id),
		};
	}

	/** A report is the machine's complete state: it replaces what was stored. */
	async report(connection: MachineConnection, state: MachineState): Promise<void> {
		const { store, clock } = this.deps;
		await saveState(store, connection.machineId, state, undefined, clock.now());
		await this.deps.usage.noteWork(connection.machineId, state);
		this.deps.changed(connection.machineId);
	}

	async plannerEvent(connection: MachineConnection, event: PlannerEvent): Promise<void> {
		this.deps.usage.noteEvent(connection.machineId, connection.owner, event);
		// The Planner stopped on the machine: the credentials it was issued for the document go now.
		if (event.event === "stopped" || event.event === "refused") {
			await this.deps.credentials.deleteForMachine(connection.machineId, event.document);
		}
		this.deps.changed(connection.machineId);
	}

	/** The machine's socket closed: it is away since now (its runs show "machine offline" from here). */
	async offline(machineId: string): Promise<void> {
		await touchMachine(this.deps.store, machineId, this.deps.clock.now());
		this.deps.log.info("machine offline", { machine: machineId });
		this.deps.changed(machineId);
	}

	/** Each repository's access for the machine's owner, checked with the machine's own authorization. */
	async #access(
		machineId: string,
		repositories: string[],
	): Promise<{ repository: string; access: Access }[] | "ended"> {
		const { authorizations, identity } = this.deps;
		if (repositories.length === 0) return [];
		let authorization: Awaited<ReturnType<MachineAuthorizations["get"]>>;
		try {
			authorization = await authorizations.get(machineId);
		} catch (error) {
			if (isIdentityError(error, "authorization-expired")) return "ended";
			throw error;
		}
		const out: { repository: string; access: Access }[] = [];
		for (const repository of repositories) {
			try {
				// Asked fresh on every hello (a conditional request: a 304 spends no rate limit).
				const permission = await identity.permission(authorization, repository, { fresh: true });
				out.push({ repository, access: permits(permission, "write") ? "ok" : "forbidden" });
			} catch (error) {
				if (isIdentityError(error, "authorization-expired")) return "ended";
				// GitHub could not say: neither allowed nor refused, and the machine stays connected.
				if (isIdentityError(error, "unavailable")) out.push({ repository, access: "unknown" });
				else throw error;
			}
		}
		return out;
	}
}
