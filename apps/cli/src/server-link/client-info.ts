// Who this CLI is, as the server hears it on every request: the Chopin-Client header (version, os, arch, install method).
import { type ClientInfo, clientInfoSchema, formatClientHeader } from "@chopin/agent-link/machine";
import type { CliContext } from "../program/context";

type Facts = Pick<CliContext, "version" | "platform" | "arch" | "installMethod">;

export function clientInfo(ctx: Facts): ClientInfo {
	return clientInfoSchema.parse({
		version: ctx.version,
		os: ctx.platform,
		arch: ctx.arch,
		install: ctx.installMethod,
	});
}

/** `chopin/0.1.0 (linux-x64; npm)`. */
export function clientHeader(ctx: Facts): string {
	return formatClientHeader(clientInfo(ctx));
}
