// The daemon's local control socket (a 0600 Unix socket, or a named pipe on Windows): newline-delimited JSON, zod-checked
// both ways but for the status and status-report requests and their answers (answerLine says why). The client's
// transport is ipc-transport.ts.

import { chmodSync, lstatSync, unlinkSync } from "node:fs";
import { JSON_TOO_DEEP_MESSAGE, parseJsonWithin } from "@chopin/agent-link/json-depth";
import { INSTALL_METHODS, plannerStateSchema, runStateSchema } from "@chopin/agent-link/machine/report";
import { z } from "zod";
import { repositorySchema } from "../machine/machine-config";
import { CliError, isCliErrorCode } from "../program/errors";
import { type AnswerChannel, listenNet, listenUnix } from "./ipc-listen";
import {
	IPC_MAX_LINE_BYTES,
	type IpcClientOptions,
	ipcNet,
	protocolError,
	sendIpcLine,
} from "./ipc-transport";
import type { Logger } from "./log";
import type { Platform } from "./paths";

export const ipcRequestSchema = z.discriminatedUnion("type", [
	z.strictObject({ type: z.literal("status") }),
	z.strictObject({
		type: z.literal("add-checkout"),
		path: z.string().min(1),
		repository: repositorySchema,
		origin: z.string().min(1),
	}),
	z.strictObject({ type: z.literal("stop") }),
	z.strictObject({ type: z.literal("reload") }),
	/**
	 * The whole `chopin status [--json]`, built by the daemon (status-by-daemon.ts): what the client would print and
	 * its exit code. The client says who it is and where it looks; a daemon of another version, or with other paths,
	 * declines, and so does one that cannot say whose machine it is yet (the client asks the server itself).
	 */
	z.strictObject({
		type: z.literal("status-report"),
		version: z.string(),
		json: z.boolean(),
		installMethod: z.enum(INSTALL_METHODS),
		paths: z.record(z.string(), z.string()),
		serviceDefinition: z.string(),
	}),
]);

export type IpcRequest = z.infer<typeof ipcRequestSchema>;

const ACCESS = ["ok", "forbidden", "unknown"] as const;

/** A Planner backend as the daemon knows it: the server's assignment and, once started, its process. */
export const daemonPlannerSchema = z.strictObject({
	document: z.string(),
	url: z.string().optional(),
	title: z.string().optional(),
	repository: z.string().optional(),
	state: plannerStateSchema.shape.state.optional(),
	worktree: z.string().optional(),
	checkout: z.string().optional(),
	pid: z.number().int().optional(),
	since: z.string().optional(),
	restarts: z.number().int().nonnegative().optional(),
	/** Why it is in its state (the last exit, a refusal, a stop). */
	reason: z.string().optional(),
	/** The sandbox it runs in, and why none when none. */
	sandbox: z.enum(["bwrap", "sandbox-exec", "none"]).optional(),
	sandboxReason: z.string().optional(),
});

export const daemonStatusSchema = z.strictObject({
	pid: z.number().int().positive(),
	version: z.string(),
	/** The service manager that runs it (`chopin run --service`), when one does. */
	service: z.enum(["systemd", "launchd", "task"]).optional(),
	startedAt: z.string(),
	server: z.string(),
	logFile: z.string(),
	connection: z.strictObject({
		state: z.enum(["connecting", "connected", "waiting", "stopped"]),
		since: z.string(),
		/** The last frame heard from the server. */
		lastContact: z.string().nullable(),
		/** Attempts since the last welcome. */
		attempts: z.number().int().nonnegative(),
		nextAttemptAt: z.string().optional(),
		lastError: z.string().optional(),
	}),
	/** The paired machine and its account, from the server's welcome; null before the first one. */
	machine: z
		.strictObject({ id: z.string(), label: z.string(), owner: z.string(), autoRun: z.boolean() })
		.nullable(),
	checkouts: z.array(
		z.strictObject({
			path: z.string(),
			repository: z.string(),
			origin: z.string().optional(),
			branch: z.string().optional(),
			/** The owner's access to its repository, as the server's welcome said. */
			access: z.enum(ACCESS).optional(),
		}),
	),
	runs: z.array(runStateSchema),
	planners: z.array(daemonPlannerSchema),
});

export type DaemonStatus = z.infer<typeof daemonStatusSchema>;
export type DaemonPlanner = z.infer<typeof daemonPlannerSchema>;

export const ipcResponseSchema = z.discriminatedUnion("type", [
	z.strictObject({ type: z.literal("status"), status: daemonStatusSchema }),
	z.strictObject({ type: z.literal("add-checkout"), added: z.boolean() }),
	z.strictObject({ type: z.literal("stop") }),
	z.strictObject({ type: z.literal("reload") }),
	z.strictObject({
		type: z.literal("status-report"),
		/** Null when the daemon declines: the client gathers the status itself. */
		output: z.strictObject({ stdout: z.string(), stderr: z.string(), exitCode: z.number().int() }).nullable(),
		/** Why it declined: the client falls back whatever the reason; this says which check differed to a reader. */
		declined: z.string().optional(),
	}),
	z.strictObject({
		type: z.literal("error"),
		code: z.string(),
		message: z.string(),
		hint: z.string().optional(),
	}),
]);

export type IpcResponse = z.infer<typeof ipcResponseSchema>;
export type IpcAnswer<T extends IpcRequest["type"]> = Extract<IpcResponse, { type: T }>;
export type IpcHandler = (request: IpcRequest) => Promise<IpcResponse>;

export interface IpcServer {
	readonly socket: string;
	close(): Promise<void>;
}

/**
 * Serves the control socket. A socket file left by a daemon that died is replaced; one with a
 * live daemon behind it is refused with daemon-already-running. The file is made 0600 (its
 * directory is 0700 too): whoever can connect can stop the daemon.
 */
export async function listenIpc(options: {
	socket: string;
	platform: Platform;
	handler: IpcHandler;
	log?: Logger;
}): Promise<IpcServer> {
	const { socket, platform } = options;
	if (platform !== "win32") await removeStaleSocket(socket);
	const serve = (channel: AnswerChannel) => serveLines(channel, options.handler, options.log);
	const listener = { socket, serve, inUse: () => alreadyRunning(socket), log: options.log };
	const closeAll = platform === "win32" ? await listenNet(listener) : listenUnix(listener);
	let ino: number | undefined;
	if (platform !== "win32") {
		chmodSync(socket, 0o600);
		ino = lstatSync(socket).ino;
	}
	return {
		socket,
		close: async () => {
			await closeAll();
			// Bun (like libuv) unlinks the socket on close; should a runtime not, remove the file
			// here, but only if it is still ours and not a newer daemon's.
			if (platform !== "win32") removeIfSame(socket, ino);
		},
	};
}

/**
 * Sends one request and waits for its answer. No daemon (no socket, or nothing listening)
 * becomes daemon-not-running naming the next command; an error answer becomes its CliError.
 */
export async function ipcRequest<T extends IpcRequest["type"]>(
	options: IpcClientOptions,
	request: Extract<IpcRequest, { type: T }>,
): Promise<IpcAnswer<T>> {
	return checkIpcAnswer(await sendIpcLine(options, ipcRequestSchema.parse(request)), request.type);
}

/** An answer line's JSON, checked as the answer to a `type` request; an error answer is thrown as its CliError. */
export function checkIpcAnswer<T extends IpcRequest["type"]>(json: unknown, type: T): IpcAnswer<T> {
	const parsed = ipcResponseSchema.safeParse(json);
	if (!parsed.success) throw protocolError("an answer in an unknown form");
	const response = parsed.data;
	if (response.type === "error") {
		const code = isCliErrorCode(response.code) ? response.code : "daemon-request-failed";
		throw new CliError(code, response.message, response.hint);
	}
	if (response.type !== type) throw protocolError(`a ${response.type} answer to a ${type} request`);
	return response as IpcAnswer<T>;
}

/** A connection's request lines, each answered in order, one at a time. */
function serveLines(channel: AnswerChannel, handler: IpcHandler, log?: Logger): (chunk: string) => void {
	let buffer = "";
	let queue = Promise.resolve();
	return (chunk) => {
		buffer += chunk;
		if (buffer.length > IPC_MAX_LINE_BYTES && !buffer.includes("\n")) {
			channel.end(
				`${JSON.stringify(errorAnswer("daemon-request-invalid", "The request is longer than the limit."))}\n`,
			);
			buffer = "";
			return;
		}
		for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
			const line = buffer.slice(0, newline);
			buffer = buffer.slice(newline + 1);
			queue = queue.then(async () => {
				const answer = await answerLine(line, handler, log);
				if (!channel.closed) channel.write(`${JSON.stringify(answer)}\n`);
			});
		}
	};
}

async function answerLine(line: string, handler: IpcHandler, log: Logger | undefined): Promise<IpcResponse> {
	const json = parseJsonWithin(line);
	if (!json.ok) {
		return errorAnswer(
			"daemon-request-invalid",
			json.reason === "too-deep" ? JSON_TOO_DEEP_MESSAGE : "The request is not JSON.",
		);
	}
	// `status` is what scripts and prompts send most, and zod (jitless) checking the request and the answer was most of
	// the daemon's ~5 ms of CPU per status (docs/performance.md): that exact request is known without it, and its
	// answer is built by daemonStatus() from the daemon's own state, whose shape the tests hold to the schema.
	// The same for `status-report`, which a plain `chopin status` sends first (status-by-daemon.ts).
	const known = isStatusRequest(json.value) || isStatusReportRequest(json.value);
	const request = known
		? ({ success: true, data: json.value as IpcRequest } as const)
		: ipcRequestSchema.safeParse(json.value);
	if (!request.success)
		return errorAnswer("daemon-request-invalid", "The request is not one the daemon knows.");
	try {
		const answer = await handler(request.data);
		return known ? answer : ipcResponseSchema.parse(answer);
	} catch (error) {
		if (error instanceof CliError) return errorAnswer(error.code, error.message, error.hint);
		log?.error({ err: error, request: request.data.type }, "control request failed");
		return errorAnswer(
			"daemon-request-failed",
			"The daemon could not carry out the request; its log has the details.",
		);
	}
}

/** Exactly `{"type":"status"}`: what ipcRequestSchema accepts as a status request, checked without zod. */
function isStatusRequest(value: unknown): boolean {
	if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
	const keys = Object.keys(value);
	return keys.length === 1 && keys[0] === "type" && (value as { type: unknown }).type === "status";
}

const STATUS_REPORT_KEYS = ["installMethod", "json", "paths", "serviceDefinition", "type", "version"];

/** What ipcRequestSchema accepts as a status-report request, checked without zod (ipc.test.ts holds the two equal). */
export function isStatusReportRequest(value: unknown): boolean {
	if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
	const keys = Object.keys(value).sort();
	if (keys.length !== STATUS_REPORT_KEYS.length || keys.some((key, i) => key !== STATUS_REPORT_KEYS[i]))
		return false;
	const request = value as Record<string, unknown>;
	const paths = request.paths;
	return (
		request.type === "status-report" &&
		typeof request.version === "string" &&
		typeof request.json === "boolean" &&
		(INSTALL_METHODS as readonly unknown[]).includes(request.installMethod) &&
		typeof request.serviceDefinition === "string" &&
		typeof paths === "object" &&
		paths !== null &&
		!Array.isArray(paths) &&
		Object.values(paths).every((path) => typeof path === "string")
	);
}

function errorAnswer(code: string, message: string, hint?: string): IpcResponse {
	return hint === undefined ? { type: "error", code, message } : { type: "error", code, message, hint };
}

/** A socket file with nothing listening is a dead daemon's: remove it. A live one is refused. */
async function removeStaleSocket(socket: string): Promise<void> {
	let isSocket: boolean;
	try {
		isSocket = lstatSync(socket).isSocket();
	} catch {
		return; // nothing there
	}
	if (!isSocket) {
		throw new CliError(
			"daemon-already-running",
			`${socket} exists and is not a socket, so the daemon cannot listen there.`,
			"Move the file away and start the daemon again.",
		);
	}
	const state = await probe(socket);
	if (state === "live") throw alreadyRunning(socket);
	if (state === "stale") removeIfSame(socket, undefined);
}

function probe(socket: string): Promise<"live" | "stale" | "missing"> {
	return new Promise((resolve) => {
		const connection = ipcNet().connect(socket);
		connection.once("connect", () => {
			connection.destroy();
			resolve("live");
		});
		connection.once("error", (error: NodeJS.ErrnoException) => {
			connection.destroy();
			// Only "refused" proves nobody listens; anything else is left alone rather than removed.
			resolve(error.code === "ENOENT" ? "missing" : error.code === "ECONNREFUSED" ? "stale" : "live");
		});
	});
}

function removeIfSame(socket: string, ino: number | undefined): void {
	try {
		if (ino !== undefined && lstatSync(socket).ino !== ino) return;
		unlinkSync(socket);
	} catch {
		// Already gone.
	}
}

function alreadyRunning(socket: string): CliError {
	return new CliError(
		"daemon-already-running",
		`A chopin daemon is already answering on ${socket}.`,
		"Use `chopin status` to see it, or `chopin stop` to stop it.",
	);
}
