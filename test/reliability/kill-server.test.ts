// kill -9 of the server process at chosen points: mid-migration (a bounded loop of kills at random short delays on
// fresh files), mid-pairing, mid-question and mid-turn, each reached by an observable sign (a file, a row, a log
// line). Afterwards the store is consistent (integrity_check, every migration once, the rows expected), the pairing
// goes on, and the machine credential and the Planner's token still attach.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../../apps/cli/src/testing/cli-process";
import { MIGRATIONS } from "../../apps/server/src/store/migrations/index";
import { LOCAL_ACCOUNTS } from "../../apps/server/src/testing/agent-fixture";
import {
	cliRequest,
	helloMachine,
	pageRequest,
	pairingStartBody,
} from "../../apps/server/src/testing/machines";
import { type CookieJar, signInLocally } from "../../apps/server/src/testing/sign-in";
import { countsFor } from "./support/counts";
import { attachPlanner } from "./support/planner-link";
import {
	freePort,
	inspectStore,
	integrity,
	killServerProcesses,
	type ServerProcess,
	spawnServer,
	startServerProcess,
} from "./support/server-process";

const counts = countsFor("kill-server");

const SERVER_ENV = {
	AUTH_MODE: "local",
	DEMO: "off",
	LOCAL_ACCOUNTS: JSON.stringify(LOCAL_ACCOUNTS),
	AGENT_CONNECTION_PING_MS: "500",
	AGENT_CONNECTION_TIMEOUT_MS: "3000",
	AGENT_CONNECTION_MAX_SILENCE_MS: "3000",
};
const ALICE = LOCAL_ACCOUNTS.users.find((u) => u.login === "alice")!.token;

const dirs: string[] = [];
function dataDir(): string {
	const dir = mkdtempSync(join(tmpdir(), "chopin-kill-"));
	dirs.push(dir);
	return dir;
}
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
	for (const thing of open.splice(0).reverse()) await thing.close();
	await killServerProcesses();
});
afterAll(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The server's HTTP through its real port, as the test helpers' Target. */
function target(server: ServerProcess) {
	return { fetch: (req: Request) => fetch(req), publicUrl: server.url };
}

/** The store after a crash: intact, and every migration applied once. */
function expectConsistent(dir: string): void {
	inspectStore(dir, (db) => {
		expect(integrity(db)).toBe("ok");
		const versions = (
			db.query("SELECT version FROM schema_migrations ORDER BY version").all() as {
				version: number;
			}[]
		).map((r) => r.version);
		expect(versions).toEqual(MIGRATIONS.map((m) => m.version));
	});
}

/** Whether every migration is recorded in the file (false when the table or rows are missing). */
function migrated(dir: string): boolean {
	try {
		return inspectStore(dir, (db) => {
			const n = db.query("SELECT COUNT(*) AS n FROM schema_migrations").get() as { n: number };
			return n.n === MIGRATIONS.length;
		});
	} catch {
		return false;
	}
}

/** A server process on a fresh data dir that a test kills with SIGKILL and starts again (same port, same file). */
async function crashableServer() {
	const dir = dataDir();
	const port = await freePort();
	const box = { dir, server: await startServerProcess({ dataDir: dir, env: SERVER_ENV, port }) };
	return Object.assign(box, {
		/** kill -9, the store checked, and the server started again on it. */
		async crash() {
			await box.server.kill9();
			counts.fault();
			expectConsistent(dir);
			box.server = await startServerProcess({ dataDir: dir, env: SERVER_ENV, port });
		},
	});
}

describe("the server process, killed with SIGKILL", () => {
	test(
		"mid-migration on a fresh SQLite file: started again, it completes, and the store is consistent",
		counts.guard(async () => {
			// The window is narrow (a few ms of DDL): kill a bounded number of times at random short delays after
			// the file appears, each on a fresh file, and check the invariants after each.
			for (let i = 0; i < 4; i++) {
				const dir = dataDir();
				const port = await freePort();
				const child = spawnServer({ dataDir: dir, env: SERVER_ENV, port });
				await eventually("the database file", () => existsSync(join(dir, "chopin.db")), 20_000);
				await Bun.sleep(Math.floor(Math.random() * 15));
				child.kill("SIGKILL");
				await child.exited;
				counts.fault();
				if (!migrated(dir)) counts.add("kills that landed before the migrations were all applied");
				const server = await startServerProcess({ dataDir: dir, env: SERVER_ENV, port });
				expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
				await server.stop();
				expectConsistent(dir);
			}
		}),
		60_000,
	);

	test(
		"mid-pairing (started, then confirmed, claim pending): after each restart the pairing goes on, and the credential works",
		counts.guard(async () => {
			const c = await crashableServer();
			const { jar } = await signInLocally(target(c.server), "alice");
			const started = await cliRequest(target(c.server), "POST", "/api/connector/pairings", {
				body: pairingStartBody(["acme/app"]),
			});
			expect(started.status).toBe(201);
			const { id, secret, code } = (await started.json()) as { id: string; secret: string; code: string };
			await c.crash();
			const confirmed = await pageRequest(
				target(c.server),
				jar,
				"POST",
				`/api/connector/pairings/${id}/confirm`,
				{
					code,
					autoRun: false,
				},
			);
			expect(confirmed.status).toBe(200);
			await c.crash();
			const claimed = await cliRequest(target(c.server), "POST", `/api/connector/pairings/${id}/claim`, {
				body: { secret },
			});
			expect(claimed.status).toBe(200);
			const { credential } = (await claimed.json()) as { credential: string };
			await c.crash();
			// The credential survives a crash too: the control channel welcomes it.
			const { client, welcome } = await helloMachine(c.server.url, credential, ["acme/app"]);
			expect(welcome.machine).toMatchObject({ owner: "alice" });
			client.close();
			inspectStore(c.dir, (db) => {
				expect(db.query("SELECT COUNT(*) AS n FROM machine_pairings WHERE id = ?").get(id)).toEqual({ n: 1 });
			});
		}),
		60_000,
	);

	test(
		"mid-question and mid-turn: after the restart the store is consistent, the Planner attaches again with its token, a new turn reaches it once, and the orphaned question's answer reaches it once as a turn of its own",
		counts.guard(async () => {
			const c = await crashableServer();
			const { jar } = await signInLocally(target(c.server), "alice");
			const bob = (await signInLocally(target(c.server), "bob")).jar;
			const created = await pageRequest(target(c.server), jar, "POST", "/api/documents", {
				repository: "acme/app",
				title: "Kill points",
			});
			expect(created.status).toBe(201);
			const documentId = ((await created.json()) as { document: { id: string } }).document.id;
			const planner = await attachPlanner({
				url: c.server.url,
				token: ALICE,
				document: documentId,
				onTurn: async (session, prompt) => {
					if (prompt.includes("ask")) void session.ask({ method: "confirm", title: "Ship it?", message: "" });
					// Mid-turn: this one runs until the link goes.
					if (prompt.includes("long"))
						await new Promise((resolve) => session.signal.addEventListener("abort", resolve));
				},
			});
			open.push(planner);
			const say = (who: CookieJar, body: string) =>
				pageRequest(target(c.server), who, "POST", `/api/documents/${documentId}/messages`, { body });
			const decisions = async () =>
				(
					(await (
						await pageRequest(target(c.server), jar, "GET", `/api/documents/${documentId}/decisions`)
					).json()) as {
						decisions: { id: string; status: string }[];
					}
				).decisions;

			/** The document's messages as stored: all of them, and those still streaming. */
			const messageCounts = () =>
				inspectStore(
					c.dir,
					(db) =>
						db
							.query(
								`SELECT COUNT(*) AS rows, COUNT(*) FILTER (WHERE status = 'streaming') AS streaming
								FROM chat_messages WHERE document_id = ?`,
							)
							.get(documentId) as { rows: number; streaming: number },
				);

			const browserBack = async (who: CookieJar) => {
				const res = await pageRequest(target(c.server), who, "GET", `/api/documents/${documentId}`);
				expect(res.status).toBe(200);
			};

			// Mid-question: the Decision is stored and open, and the turn that asked it has ended (its turn-end comes
			// just after the question: a crash before the reply is stored done would fail that reply instead).
			expect((await say(bob, "@chopin ask")).status).toBe(201);
			await eventually("the Decision", async () => (await decisions()).length === 1);
			await eventually("the asking turn's reply done", () => {
				const { rows, streaming } = messageCounts();
				return rows === 2 && streaming === 0;
			});
			await c.crash();
			// The owner's browser comes back (its cookie restores the sign-in), so the Planner may attach again.
			await browserBack(jar);
			await eventually("reattached after the crash", () => planner.attaches > 1);
			expect(planner.ended).toBeUndefined();

			// Mid-turn: the turn is at the Planner, the reply being written.
			const bob2 = (await signInLocally(target(c.server), "bob")).jar;
			expect((await say(bob2, "@chopin long")).status).toBe(201);
			await eventually("the turn at the Planner", () => planner.turns.some((p) => p.includes("long")));
			// Its reply's row is written just after the turn leaves (docs/server.md): the crash comes once it is.
			await eventually("the reply being written", () => messageCounts().streaming === 1);
			await c.crash();
			await browserBack(jar);
			await eventually("reattached after the second crash", () => planner.attaches > 2);
			const bob3 = (await signInLocally(target(c.server), "bob")).jar;
			expect((await say(bob3, "@chopin after")).status).toBe(201);
			await eventually("the turn after", () => planner.turns.some((p) => p.includes("after")));
			expect(planner.turns.filter((p) => p.includes("long"))).toHaveLength(1);
			expect(planner.turns.filter((p) => p.includes("after"))).toHaveLength(1);
			// The reply's row is written just after its turn leaves, so it may not exist yet when the turn is seen.
			await eventually("the last reply done", () => {
				const { rows, streaming } = messageCounts();
				return rows === 6 && streaming === 0;
			});
			inspectStore(c.dir, (db) => {
				expect(integrity(db)).toBe("ok");
				const rows = db
					.query("SELECT role, body, status, error FROM chat_messages WHERE document_id = ? ORDER BY seq")
					.all(documentId);
				// The reply the crash cut is failed, saying why, not left typing; the others are done.
				expect(rows).toEqual([
					{ role: "person", body: "@chopin ask", status: "done", error: null },
					{ role: "planner", body: "", status: "done", error: null },
					{ role: "person", body: "@chopin long", status: "done", error: null },
					{
						role: "planner",
						body: "",
						status: "failed",
						error: "Chopin restarted before this reply finished.",
					},
					{ role: "person", body: "@chopin after", status: "done", error: null },
					{ role: "planner", body: "", status: "done", error: null },
				]);
				// The question's Decision is still there (open: its asker's link died with the process).
				expect(db.query("SELECT status FROM decisions WHERE document_id = ?").all(documentId)).toEqual([
					{ status: "open" },
				]);
			});
			// Answered now, nobody waits on its request: it reaches the attached Planner once, as a turn of its own.
			const [decision] = await decisions();
			const answered = await pageRequest(
				target(c.server),
				bob3,
				"POST",
				`/api/decisions/${decision!.id}/answer`,
				{
					answer: { kind: "confirm", yes: true },
				},
			);
			expect(answered.status).toBe(200);
			await eventually("the follow-up at the Planner", () =>
				planner.turns.some((p) => p.includes("automatic follow-up") && p.includes("Ship it?")),
			);
			await eventually("the follow-up done", () => planner.turns.length >= 4);
			expect(planner.turns.filter((p) => p.includes("automatic follow-up"))).toHaveLength(1);
		}),
		60_000,
	);
});
