// The one context every command runs in: streams, environment, platform, clock, paths, spawning, logging. Built only in main.ts (and tests).
import type { NetworkInterfaceInfo } from "node:os";
import type { Clock } from "@chopin/agent-link/clock";
import type { execa } from "execa";
import type { ClientOptions, WebSocket } from "ws";
import type { Logger } from "../local/log";
import type { CliPaths, Platform } from "../local/paths";
import type { Secrets } from "../local/secrets";
import type { InstallMethod } from "./version";

/** Opens a WebSocket with the `ws` package (whose unexpected-response event exposes a refused upgrade's body). */
export type OpenWebSocket = (url: string, protocols: string[], options: ClientOptions) => WebSocket;

/** An output stream: text goes out, and whether a person is watching it. */
export interface Writer {
	write(text: string): void;
	readonly isTTY: boolean;
	/** Terminal width when isTTY; help text wraps to it. */
	readonly columns?: number | undefined;
}

export interface Reader {
	readonly stream: NodeJS.ReadableStream;
	readonly isTTY: boolean;
}

export interface CliContext {
	/** Data (what --json prints). */
	readonly stdout: Writer;
	/** Status, progress, errors and hints. */
	readonly stderr: Writer;
	readonly stdin: Reader;
	readonly env: Readonly<Record<string, string | undefined>>;
	readonly cwd: string;
	/** A parameter, never read from process.platform in command code, so every branch runs in tests on Linux. */
	readonly platform: Platform;
	readonly arch: string;
	readonly home: string;
	readonly clock: Clock;
	readonly paths: CliPaths;
	readonly fetch: typeof fetch;
	readonly openWebSocket: OpenWebSocket;
	readonly spawn: typeof execa;
	/** This computer's name: the default machine label. */
	readonly hostname: string;
	/**
	 * Who runs chopin: the numeric uid (-1 on Windows) and the login name (`DOMAIN\\name` on Windows), which the
	 * service commands name to systemd's linger, launchd's gui/<uid> domain and a task's logon trigger.
	 */
	readonly user: { readonly uid: number; readonly name: string };
	/** os.networkInterfaces(): the daemon polls it to notice a network change. */
	readonly networkInterfaces: () => NodeJS.Dict<NetworkInterfaceInfo[]>;
	readonly version: string;
	/** The running binary (or bun, when run from source). */
	readonly execPath: string;
	/** The argv that starts this CLI again: [binary] when compiled, [bun, main.ts] from source. */
	readonly selfCommand: readonly string[];
	/**
	 * Replaces this process with argv (execve: same pid, stdio and environment), so what was in this one's command
	 * line is gone; undefined where that is not possible (Windows, and in-process tests), and the caller carries on.
	 */
	readonly reexec?: (argv: readonly string[]) => never;
	readonly installMethod: InstallMethod;
	readonly log: Logger;
	/** Secrets learnt at run time (credential, issued tokens, --env values): masked in every log line. */
	readonly secrets: Secrets;
	/** Aborted on Ctrl-C / SIGTERM: long-running commands stop and end with `interrupted`. */
	readonly signal: AbortSignal;
}

/** Whether the command may ask a question: only with a person at both ends (STYLE 7). */
export function canPrompt(ctx: Pick<CliContext, "stdin" | "stderr">): boolean {
	return ctx.stdin.isTTY && ctx.stderr.isTTY;
}
