import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { ManualClock } from "@chopin/agent-link/clock";
import { JSON_TOO_DEEP_MESSAGE } from "@chopin/agent-link/json-depth";
import { CliError } from "../program/errors";
import { killFixtures, startFixture } from "../testing/child";
import { makeTempDir } from "../testing/context";
import { sampleDaemonStatus } from "../testing/daemon-status";
import { asyncRefusal as refusal } from "../testing/refusal";
import {
	type IpcHandler,
	type IpcRequest,
	type IpcServer,
	ipcRequest,
	ipcRequestSchema,
	isStatusReportRequest,
	listenIpc,
} from "./ipc";

const dirs: string[] = [];
const servers: IpcServer[] = [];
const raw: Server[] = [];
const rawConnections = new Set<Socket>();
afterEach(async () => {
	for (const server of servers.splice(0)) await server.close();
	for (const connection of rawConnections) connection.destroy();
	rawConnections.clear();
	for (const server of raw.splice(0)) await new Promise((resolve) => server.close(resolve));
	await killFixtures();
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function socketPath(): string {
	const dir = makeTempDir("chopin-ipc-");
	dirs.push(dir);
	mkdirSync(join(dir, "state"), { mode: 0o700 });
	return join(dir, "state", "chopin.sock");
}

const status = sampleDaemonStatus();

const STATUS_REPORT = {
	type: "status-report",
	version: "0.1.0",
	json: true,
	installMethod: "binary",
	paths: { socket: "/state/chopin.sock", credentialFile: "/state/credential.json" },
	serviceDefinition: "/home/ana/.config/systemd/user/chopin.service",
} as const;

const received: IpcRequest[] = [];
const handler: IpcHandler = async (request) => {
	received.push(request);
	switch (request.type) {
		case "status":
			return { type: "status", status };
		case "add-checkout":
			if (request.repository === "octo-org/locked") {
				throw new CliError(
					"checkout-locked",
					"The checkout /src/x is in use by another chopin process (pid 7).",
					"Stop it.",
				);
			}
			if (request.repository === "octo-org/boom") throw new Error("disk on fire");
			return { type: "add-checkout", added: request.path !== "/src/score" };
		case "stop":
			return { type: "stop" };
		case "reload":
			return { type: "reload" };
		case "status-report":
			return request.json
				? { type: "status-report", output: { stdout: "{}\n", stderr: "", exitCode: 0 } }
				: { type: "status-report", output: null, declined: "not in text" };
	}
};

async function serve(socket: string, h: IpcHandler = handler): Promise<IpcServer> {
	const server = await listenIpc({ socket, platform: "linux", handler: h });
	servers.push(server);
	return server;
}

const clock = () => new ManualClock();

/** A status request or answer whose field nests 9,000 arrays deep. */
const deep = `{"type":"status","status":${"[".repeat(9000)}${"]".repeat(9000)}}`;

describe("the control socket", () => {
	test("round trips every request type, zod-checked", async () => {
		const socket = socketPath();
		await serve(socket);
		const options = { socket, clock: clock() };
		expect(await ipcRequest(options, { type: "status" })).toEqual({ type: "status", status });
		expect(
			await ipcRequest(options, {
				type: "add-checkout",
				path: "/src/new",
				repository: "octo-org/new",
				origin: "git@github.com:octo-org/new.git",
			}),
		).toEqual({ type: "add-checkout", added: true });
		expect(
			await ipcRequest(options, {
				type: "add-checkout",
				path: "/src/score",
				repository: "octo-org/score",
				origin: "x",
			}),
		).toEqual({ type: "add-checkout", added: false });
		expect(await ipcRequest(options, { type: "reload" })).toEqual({ type: "reload" });
		expect(await ipcRequest(options, { type: "stop" })).toEqual({ type: "stop" });
		for (const json of [true, false])
			expect(await ipcRequest(options, { ...STATUS_REPORT, json })).toEqual(
				json
					? { type: "status-report", output: { stdout: "{}\n", stderr: "", exitCode: 0 } }
					: { type: "status-report", output: null, declined: "not in text" },
			);
		expect(received.at(-1)).toEqual({ ...STATUS_REPORT, json: false });
	});

	test("the status-report request is known without zod exactly as the schema knows it", () => {
		const variants: unknown[] = [
			STATUS_REPORT,
			{ ...STATUS_REPORT, json: false, installMethod: "npm", paths: {} },
			{ ...STATUS_REPORT, extra: 1 },
			{ ...STATUS_REPORT, json: "yes" },
			{ ...STATUS_REPORT, version: 1 },
			{ ...STATUS_REPORT, installMethod: "homebrew" },
			{ ...STATUS_REPORT, paths: { socket: 1 } },
			{ ...STATUS_REPORT, paths: ["/s"] },
			{ ...STATUS_REPORT, paths: null },
			{ ...STATUS_REPORT, serviceDefinition: undefined },
			{ ...STATUS_REPORT, type: "status" },
			[STATUS_REPORT],
			null,
			"status-report",
		];
		for (const value of variants) {
			const json = JSON.parse(JSON.stringify(value) ?? "null");
			expect({ json, known: isStatusReportRequest(json) }).toEqual({
				json,
				known: ipcRequestSchema.safeParse(json).success,
			});
		}
		expect(isStatusReportRequest(STATUS_REPORT)).toBe(true);
	});

	test("the socket is 0600 and removed on close", async () => {
		const socket = socketPath();
		const server = await serve(socket);
		const stat = lstatSync(socket);
		expect(stat.isSocket()).toBe(true);
		expect(stat.mode & 0o777).toBe(0o600);
		await server.close();
		servers.splice(servers.indexOf(server), 1);
		expect(existsSync(socket)).toBe(false);
	});

	test("a handler's CliError reaches the client as the same code, message and hint", async () => {
		const socket = socketPath();
		await serve(socket);
		const error = await refusal(
			ipcRequest(
				{ socket, clock: clock() },
				{ type: "add-checkout", path: "/src/x", repository: "octo-org/locked", origin: "o" },
			),
		);
		expect(error).toMatchObject({ code: "checkout-locked", exitCode: 14, hint: "Stop it." });
		expect(error.message).toContain("(pid 7)");
	});

	test("any other handler failure is daemon-request-failed, without its details", async () => {
		const socket = socketPath();
		await serve(socket);
		const error = await refusal(
			ipcRequest(
				{ socket, clock: clock() },
				{ type: "add-checkout", path: "/src/x", repository: "octo-org/boom", origin: "o" },
			),
		);
		expect(error.code).toBe("daemon-request-failed");
		expect(error.message).not.toContain("fire");
	});

	test("the client refuses to send a malformed request", async () => {
		const socket = socketPath();
		await serve(socket);
		// "no-slash" is a string to TypeScript; only the schema knows it is not owner/name.
		await expect(
			ipcRequest(
				{ socket, clock: clock() },
				{ type: "add-checkout", path: "/x", repository: "no-slash", origin: "o" },
			),
		).rejects.toThrow();
	});

	test("the server answers malformed lines with daemon-request-invalid, in order, on one connection", async () => {
		const socket = socketPath();
		await serve(socket);
		const lines = await talk(
			socket,
			["not json", deep, '{"type":"shutdown"}', '{"type":"status","extra":1}', '{"type":"status"}'],
			5,
		);
		expect(lines.map((l) => JSON.parse(l))).toEqual([
			{ type: "error", code: "daemon-request-invalid", message: "The request is not JSON." },
			{ type: "error", code: "daemon-request-invalid", message: JSON_TOO_DEEP_MESSAGE },
			{ type: "error", code: "daemon-request-invalid", message: "The request is not one the daemon knows." },
			{ type: "error", code: "daemon-request-invalid", message: "The request is not one the daemon knows." },
			{ type: "status", status },
		]);
	});

	test("an answer larger than the socket takes at once arrives whole, after the request lines before it", async () => {
		const socket = socketPath();
		// ~700 KB: more than a Unix socket's send buffer, so the daemon writes the rest as the socket drains.
		const message = "m".repeat(700_000);
		await serve(socket, async (request) =>
			request.type === "status"
				? { type: "status", status }
				: { type: "error", code: "checkout-locked", message },
		);
		const lines = await talk(socket, ['{"type":"stop"}', '{"type":"status"}'], 2);
		expect(JSON.parse(lines[0]!)).toEqual({ type: "error", code: "checkout-locked", message });
		expect(JSON.parse(lines[1]!)).toEqual({ type: "status", status });
	});

	test("an over-long request is refused and the connection closed", async () => {
		const socket = socketPath();
		await serve(socket);
		const lines = await talk(socket, ["x".repeat(1024 * 1024 + 10)], 1, false);
		expect(JSON.parse(lines[0]!)).toMatchObject({ type: "error", code: "daemon-request-invalid" });
	});
});

describe("no daemon", () => {
	test("no socket file: daemon-not-running naming the next command", async () => {
		const socket = socketPath();
		const error = await refusal(ipcRequest({ socket, clock: clock() }, { type: "status" }));
		expect(error.code).toBe("daemon-not-running");
		expect(error.exitCode).toBe(4);
		expect(`${error.message} ${error.hint}`).toBe(
			"No chopin daemon is running. Start it with `chopin run` or `chopin service install`.",
		);
	});

	test("a socket file nobody listens on (a killed daemon): daemon-not-running too", async () => {
		const socket = socketPath();
		const daemon = await startFixture("hold-socket", [socket]);
		await daemon.kill();
		expect(lstatSync(socket).isSocket()).toBe(true);
		expect((await refusal(ipcRequest({ socket, clock: clock() }, { type: "status" }))).code).toBe(
			"daemon-not-running",
		);
	});

	test("a file or a FIFO where the socket should be: daemon-not-running, at once", async () => {
		const file = socketPath();
		writeFileSync(file, "not a socket");
		expect((await refusal(ipcRequest({ socket: file, clock: clock() }, { type: "status" }))).code).toBe(
			"daemon-not-running",
		);
		const fifo = socketPath();
		expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
		expect((await refusal(ipcRequest({ socket: fifo, clock: clock() }, { type: "status" }))).code).toBe(
			"daemon-not-running",
		);
	});

	test("a daemon that accepts but never answers: daemon-not-responding when the injected clock says so", async () => {
		const socket = socketPath();
		const asked = Promise.withResolvers<Socket>();
		// The client's timer starts once it is connected, before it sends: wait for the request.
		await rawServer(socket, (connection) => connection.once("data", () => asked.resolve(connection)));
		const manual = clock();
		const pending = ipcRequest({ socket, clock: manual, timeoutMs: 10_000 }, { type: "status" });
		const connection = await asked.promise;
		await manual.advance(9_999);
		await manual.advance(1);
		const error = await refusal(pending);
		expect(error.code).toBe("daemon-not-responding");
		connection.destroy();
	});

	test("Ctrl-C while waiting for a silent daemon: interrupted", async () => {
		const socket = socketPath();
		const connected = Promise.withResolvers<Socket>();
		await rawServer(socket, (connection) => connected.resolve(connection));
		const controller = new AbortController();
		const pending = ipcRequest({ socket, clock: clock(), signal: controller.signal }, { type: "status" });
		await connected.promise;
		controller.abort();
		expect(await refusal(pending)).toMatchObject({ code: "interrupted", exitCode: 130 });
		const aborted = await refusal(
			ipcRequest({ socket, clock: clock(), signal: controller.signal }, { type: "status" }),
		);
		expect(aborted.code).toBe("interrupted");
	});

	test("an answer that is not the protocol is daemon-protocol-error", async () => {
		const socket = socketPath();
		await rawServer(socket, (connection) => connection.end('{"type":"status","status":{"pid":"x"}}\n'));
		expect((await refusal(ipcRequest({ socket, clock: clock() }, { type: "status" }))).code).toBe(
			"daemon-protocol-error",
		);
	});

	test("an answer nested deeper than MAX_JSON_DEPTH is daemon-protocol-error, read no further", async () => {
		const socket = socketPath();
		await rawServer(socket, (connection) => connection.end(`${deep}\n`));
		expect(await refusal(ipcRequest({ socket, clock: clock() }, { type: "status" }))).toMatchObject({
			code: "daemon-protocol-error",
			message: "The chopin daemon sent an answer nested too deep.",
		});
	});

	test("a connection closed without an answer is daemon-protocol-error", async () => {
		const socket = socketPath();
		await rawServer(socket, (connection) => connection.end());
		expect((await refusal(ipcRequest({ socket, clock: clock() }, { type: "status" }))).code).toBe(
			"daemon-protocol-error",
		);
	});
});

describe("starting the server", () => {
	test("a stale socket left by a SIGKILLed daemon is removed and replaced", async () => {
		const socket = socketPath();
		const daemon = await startFixture("hold-socket", [socket]);
		expect(daemon.ready).toBe(`listening ${daemon.pid}`);
		await daemon.kill();
		expect(existsSync(socket)).toBe(true);
		await serve(socket);
		expect(await ipcRequest({ socket, clock: clock() }, { type: "status" })).toEqual({
			type: "status",
			status,
		});
	});

	test("a live daemon is not displaced: daemon-already-running", async () => {
		const socket = socketPath();
		const daemon = await startFixture("hold-socket", [socket]);
		const error = await refusal(serve(socket));
		expect(error.code).toBe("daemon-already-running");
		// The live daemon still answers.
		const answer = await ipcRequest({ socket, clock: clock() }, { type: "status" });
		expect(answer.status.pid).toBe(daemon.pid);
	});

	test("something that is not a socket is left alone", async () => {
		const socket = socketPath();
		writeFileSync(socket, "not a socket");
		expect((await refusal(serve(socket))).code).toBe("daemon-already-running");
		expect(existsSync(socket)).toBe(true);
	});
});

/** A plain net server standing in for a daemon that misbehaves. */
async function rawServer(socket: string, onConnection: (connection: Socket) => void): Promise<void> {
	const server = createServer((connection) => {
		rawConnections.add(connection);
		onConnection(connection);
	});
	raw.push(server);
	await new Promise<void>((resolve) => server.listen(socket, resolve));
}

/** Sends raw lines on one connection and collects `count` answer lines. */
function talk(socket: string, lines: string[], count: number, newline = true): Promise<string[]> {
	return new Promise((resolve, reject) => {
		const connection = connect(socket);
		let buffer = "";
		connection.setEncoding("utf8");
		connection.on("connect", () => connection.write(lines.map((l) => (newline ? `${l}\n` : l)).join("")));
		connection.on("data", (chunk: string) => {
			buffer += chunk;
			const answers = buffer.split("\n").filter((l) => l !== "");
			if (answers.length >= count) {
				connection.destroy();
				resolve(answers.slice(0, count));
			}
		});
		connection.on("error", reject);
	});
}
