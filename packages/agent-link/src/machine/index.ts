/** @chopin/agent-link/machine: the paired machine's HTTP API and control channel (chopin.machine.v1). */
export * from "./parse";
export * from "./protocol";
export * from "./report";
export * from "./runs";
export * from "./schemas";
