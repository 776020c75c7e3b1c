// A real Chopin server for the CLI's tests (the server's own test fixture, local mode), a person signed in on it,
// and CLI homes (state, config, a git checkout) that are paired with it, by the CLI or directly through its API.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "@chopin/agent-link/clock";
import { LOCAL_ENV, pageRequest, pairLocally, type Target } from "../../../server/src/testing/machines";
import { startTestServer, type TestServer } from "../../../server/src/testing/server";
import { type CookieJar, signInLocally } from "../../../server/src/testing/sign-in";
import { type CliPaths, platformDirs, resolvePaths } from "../local/paths";
import { Secrets } from "../local/secrets";
import { saveCredential } from "../machine/credential";
import { saveMachineConfig } from "../machine/machine-config";
import { makeTempDir } from "./context";
import { makeRepo } from "./git";

export interface MachineServer {
	readonly server: TestServer;
	readonly target: Target;
	/** ana, signed in (admin of octo/score, writer of octo/other). */
	readonly jar: CookieJar;
	/** Confirms a pairing as ana, with the code the CLI printed. */
	confirm(pairingId: string, code: string): Promise<Response>;
	/** Revokes a machine as its owner does on the Machines page. */
	revoke(machineId: string): Promise<Response>;
	/** Requests the server logged for a path (every request is logged at debug). */
	requests(path: string): Record<string, unknown>[];
	online(machineId: string): boolean;
}

export async function startMachineServer(
	options: { store?: "sqlite" | "postgres"; env?: Record<string, string>; clock?: Clock } = {},
): Promise<MachineServer> {
	const server = await startTestServer({
		store: options.store,
		clock: options.clock,
		env: { ...LOCAL_ENV, ...options.env },
	});
	const target: Target = {
		fetch: (req) => server.fetch(req),
		get publicUrl() {
			return server.context.config.publicUrl;
		},
	};
	const { jar } = await signInLocally(target, "ana");
	return {
		server,
		target,
		jar,
		confirm: (id, code) =>
			pageRequest(target, jar, "POST", `/api/connector/pairings/${id}/confirm`, { code, autoRun: false }),
		revoke: (machineId) => pageRequest(target, jar, "DELETE", `/api/machines/${machineId}`),
		requests: (path) => server.logs.filter((line) => line.msg === "request" && line.path === path),
		online: (machineId) => server.context.machines.control.isOnline(machineId),
	};
}

export interface CliHome {
	readonly root: string;
	readonly env: Record<string, string>;
	readonly paths: CliPaths;
	/** A git checkout with an origin on octo/score. */
	readonly checkout: string;
	/** Another checkout, on octo/other. */
	makeCheckout(name: string, repository: string): Promise<string>;
}

/** Temp state and config dirs, a HOME, and a checkout; extra environment for the CLI on top. */
export async function makeCliHome(extraEnv: Record<string, string> = {}): Promise<CliHome> {
	const root = makeTempDir("chopin-cli-home-");
	const env: Record<string, string> = {
		PATH: process.env.PATH ?? "",
		HOME: join(root, "home"),
		CHOPIN_STATE_DIR: join(root, "state"),
		CHOPIN_CONFIG_DIR: join(root, "config"),
		CHOPIN_LOG_LEVEL: "debug",
		GIT_CONFIG_GLOBAL: "/dev/null",
		GIT_CONFIG_NOSYSTEM: "1",
		...extraEnv,
	};
	mkdirSync(env.HOME!, { recursive: true });
	// The cache dir (checkout locks) as the CLI finds it from this HOME; state and config are always overridden.
	const paths = resolvePaths({
		env,
		platform: "linux",
		cwd: root,
		defaults: { data: "/x", config: "/y", cache: platformDirs("linux", env, env.HOME!).cache },
	});
	const makeCheckout = (name: string, repository: string) =>
		makeRepo(join(root, name), { origin: `git@github.com:${repository}.git` });
	const checkout = await makeCheckout("score", "octo/score");
	return { root, env, paths, checkout, makeCheckout };
}

/**
 * Pairs a home with the server through its API (as ana), without the CLI: for tests about the
 * daemon rather than pairing. Writes credential.json and machine.json as `chopin connect` would.
 */
export async function pairHome(
	machines: MachineServer,
	home: CliHome,
	checkouts: { path: string; repository: string }[] = [{ path: home.checkout, repository: "octo/score" }],
): Promise<{ credential: string; machineId: string }> {
	const paired = await pairLocally(machines.target, machines.jar, {
		repositories: [...new Set(checkouts.map((c) => c.repository))],
	});
	const server = machines.server.url;
	const deps = { paths: home.paths, platform: "linux" as const, secrets: new Secrets() };
	saveCredential(deps, {
		server,
		token: paired.credential,
		machineId: paired.machineId,
		createdAt: new Date().toISOString(),
	});
	saveMachineConfig(home.paths, {
		version: 1,
		server,
		label: "test machine",
		checkouts: checkouts.map((c) => ({ ...c, origin: `git@github.com:${c.repository}.git` })),
	});
	return { credential: paired.credential, machineId: paired.machineId };
}
