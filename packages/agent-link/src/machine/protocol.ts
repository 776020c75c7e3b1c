/**
 * chopin.machine.v1: the constants of a paired machine's control channel and HTTP API, shared by
 * the server and the CLI (docs/machines.md is the prose).
 */
import { z } from "zod";
import { INSTALL_METHODS } from "./report";

export const MACHINE_SUBPROTOCOL = "chopin.machine.v1";
export const MACHINE_PROTOCOL_VERSION = 1;
export const MACHINE_PATH = "/api/v1/machine";

/** chopin_m_ then 43 base64url characters: 32 random bytes. */
export const MACHINE_CREDENTIAL_PATTERN = /^chopin_m_[A-Za-z0-9_-]{43}$/;

/** The header naming the CLI on every request: `chopin/0.3.1 (linux-x64; npm)`. */
export const CLIENT_HEADER = "Chopin-Client";

export const installMethodSchema = z.enum(INSTALL_METHODS);
export type InstallMethod = z.infer<typeof installMethodSchema>;

const semver = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

export const clientInfoSchema = z.strictObject({
	version: z.string().regex(semver, "must be a version like 1.2.3"),
	os: z.string().regex(/^[a-z0-9]{1,16}$/),
	arch: z.string().regex(/^[a-z0-9]{1,16}$/),
	install: installMethodSchema,
});
export type ClientInfo = z.infer<typeof clientInfoSchema>;

export function formatClientHeader(client: ClientInfo): string {
	return `chopin/${client.version} (${client.os}-${client.arch}; ${client.install})`;
}

/** Reads a Chopin-Client header; undefined when it is missing or not of that form. */
export function parseClientHeader(value: string | null | undefined): ClientInfo | undefined {
	const match = /^chopin\/(\S+) \(([a-z0-9]+)-([a-z0-9]+); ([a-z]+)\)$/.exec(value?.trim() ?? "");
	if (!match) return undefined;
	const parsed = clientInfoSchema.safeParse({
		version: match[1],
		os: match[2],
		arch: match[3],
		install: match[4],
	});
	return parsed.success ? parsed.data : undefined;
}

/** Compares two x.y.z versions (pre-release tags sort before their release). */
export function compareVersions(a: string, b: string): number {
	const split = (v: string) => {
		const [core = "", pre] = v.split("-", 2);
		return { nums: core.split(".").map((n) => Number(n) || 0), pre };
	};
	const x = split(a);
	const y = split(b);
	for (let i = 0; i < 3; i++) {
		const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
		if (d !== 0) return Math.sign(d);
	}
	if (x.pre === y.pre) return 0;
	if (x.pre === undefined) return 1;
	if (y.pre === undefined) return -1;
	return x.pre < y.pre ? -1 : 1;
}

/**
 * The exact command that upgrades the CLI, for the way it was installed (the same table as
 * apps/cli/src/version.ts, which also knows where a standalone binary lives). The server names
 * it when it refuses a version; `os` picks PowerShell for Windows.
 */
export function upgradeCommand(
	install: InstallMethod,
	version: string,
	serverOrigin: string,
	os?: string,
): string {
	switch (install) {
		case "npm":
			return `npm install -g @chopin/cli@${version}`;
		case "pnpm":
			return `pnpm add -g @chopin/cli@${version}`;
		case "yarn":
			return `yarn global add @chopin/cli@${version}`;
		case "bun":
			return `bun add -g @chopin/cli@${version}`;
		case "script":
		case "binary":
			return os === "win32" || os === "windows"
				? `$env:CHOPIN_VERSION='${version}'; irm ${serverOrigin}/install.ps1 | iex`
				: `curl -fsSL ${serverOrigin}/install.sh | CHOPIN_VERSION=${version} sh`;
		case "source":
			return "git pull --ff-only && bun install";
	}
}

/**
 * Why the server refuses a machine, as data: the code in HTTP bodies and `revoked`, its HTTP
 * status, its close code on the control channel, and the CLI exit it leads to. None is retried.
 */
export const MACHINE_REFUSALS = {
	"machine-revoked": { status: 401, close: 4410, final: true },
	"machine-reauthorize": { status: 401, close: 4412, final: true },
	"client-version-refused": { status: 426, close: 4426, final: true },
	"repository-access-lost": { status: 403, close: 4403, final: true },
} as const;
export type MachineRefusalCode = keyof typeof MACHINE_REFUSALS;
export const machineRefusalCodeSchema = z.enum(
	Object.keys(MACHINE_REFUSALS) as [MachineRefusalCode, ...MachineRefusalCode[]],
);

/** Close codes of the control channel besides the refusals above. */
export const MACHINE_CLOSE = {
	normal: 1000,
	unresponsive: 1001,
	protocol: 1008,
	tooLarge: 1009,
	restarting: 1012,
	/** A newer connection with the same credential took over; the older process stops. */
	replaced: 4409,
} as const;

/** Frames on the control channel are small; 256 KiB bounds a report of many checkouts. */
export const MACHINE_MAX_FRAME_BYTES = 256 * 1024;
