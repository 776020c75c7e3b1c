// What the builds domain needs of paired machines, as an interface: machine-builds.ts implements it over
// ctx.machines, so neither domain imports the other's internals.
import type { Checkout, MachineServerMessage, RunnerReport } from "@chopin/agent-link/machine";

export interface BuildMachine {
	id: string;
	owner: string;
	label: string;
	online: boolean;
	/** When it was last heard from (a machine away is away since then). */
	lastContactAt: number;
	/** Revoked, or waiting to be paired again: its runs' credentials stop working at once. */
	revoked: boolean;
	/** Whether it can run builds, as last reported; null from a CLI before builds. */
	runner: RunnerReport | null;
	checkouts: Checkout[];
}

export interface MachinePort {
	machine(machineId: string): Promise<BuildMachine | undefined>;
	/** The person's choice of their own machine for the document (docs/machines.md § Machine choice). */
	choose(login: string, documentId: string, repository: string): Promise<BuildMachine | undefined>;
	online(machineId: string): boolean;
	/** Sends on the machine's control channel; false when it is not online. */
	send(machineId: string, message: MachineServerMessage): boolean;
}
