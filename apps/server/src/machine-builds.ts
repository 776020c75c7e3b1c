// Where paired machines meet builds and investigations: the machines' run messages, hellos and reports go to
// ctx.builds, a machine coming or going republishes its runs, a revoked machine's runs are lost, and a document with
// a live run is busy (its Planner is never withdrawn as unused). Neither domain imports the other; this wires them.
import type { MachinePort } from "./builds/machine-port";
import type { Builds } from "./builds/service";
import type { Machines } from "./machines/service";

/** What the builds domain sees of the machines. */
export function machinePort(machines: Machines): MachinePort {
	const toBuildMachine = (machine: Awaited<ReturnType<Machines["machine"]>> & object) => ({
		id: machine.id,
		owner: machine.owner,
		label: machine.label,
		online: machines.isOnline(machine.id),
		lastContactAt: machine.lastContactAt,
		revoked: machine.revokedAt !== null || machine.reauthorize,
		runner: machine.runner,
		checkouts: machine.checkouts,
	});
	return {
		async machine(machineId) {
			const machine = await machines.machine(machineId);
			return machine && toBuildMachine(machine);
		},
		async choose(login, documentId, repository) {
			const choice = await machines.choose(login, documentId, repository);
			return choice && toBuildMachine(choice.machine);
		},
		online: (machineId) => machines.isOnline(machineId),
		send: (machineId, message) => machines.send(machineId, message),
	};
}

/** Connects the two; returns what undoes it (the server is stopping). */
export function connectMachinesToBuilds(machines: Machines, builds: Builds): () => void {
	const offs = [
		machines.setRunHandler({
			ready: (machineId, runs) => builds.machineReady(machineId, runs),
			reported: (machineId, runs) => builds.machineReported(machineId, runs),
			message: (machineId, message) => builds.machineMessage(machineId, message),
		}),
		machines.onChange((machineId) => builds.machineChanged(machineId)),
		// Both revocation and a machine to be paired again end its runs: it can no longer report them.
		machines.onRevoked((machineId) => builds.machineRevoked(machineId)),
		machines.addBusyCheck((documentId) => builds.hasLive(documentId)),
	];
	return () => {
		for (const off of offs.splice(0)) off();
	};
}
