// Spec "Ownership": one Planner per document, the grace period after a detach or a drop, the ends without one
// (sign-out, session expiry, a writer's reset, archive, delete), the 5-minute rechecks, and planner.status,
// in local and GitHub mode, on SQLite and PostgreSQL.
import { afterEach, describe, expect, test } from "bun:test";
import type { StoreKind } from "../store/store";
import { AgentFixture, type AgentMode } from "../testing/agent-fixture";
import { wording } from "./wording";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const GRACE = 120_000;
const matrix: [AgentMode, StoreKind][] = [
	["local", "sqlite"],
	["github", "sqlite"],
	["local", "postgres"],
	["github", "postgres"],
];

async function refusedAndClosed(socket: {
	expect: (t: "refused") => Promise<unknown>;
	closed: Promise<{ code: number }>;
}) {
	const refused = await socket.expect("refused");
	return { refused, code: (await socket.closed).code };
}

for (const [mode, store] of matrix) {
	describe(`ownership (${mode}, ${store})`, () => {
		const start = async (env = {}) => {
			f = await AgentFixture.start({ mode, store, env });
			const doc = await f.createDocument();
			await f.signIn(f.cast.admin);
			await f.signIn(f.cast.writer);
			return { f, doc, admin: f.cast.admin, writer: f.cast.writer };
		};

		test("one Planner per document: any other attach is refused planner-attached (4409), naming the holder", async () => {
			const { f, doc, admin, writer } = await start();
			await f.attach(admin, doc.id);
			for (const login of [writer, admin]) {
				const socket = await f.connect(login);
				socket.send({ type: "attach", version: 1, document: doc.id });
				expect(await refusedAndClosed(socket)).toEqual({
					refused: {
						type: "refused",
						code: "planner-attached",
						message: `${admin} is connected to this document. A document has one agent connected at a time.`,
					},
					code: 4409,
				});
			}
		});

		test("after a detach the account keeps the document for the grace period; another is refused until it ends", async () => {
			const { f, doc, admin, writer } = await start();
			const events = f.events(doc.id);
			const { socket } = await f.attach(admin, doc.id);
			socket.send({ type: "detach" });
			expect(await socket.closed).toEqual({ code: 1000, reason: "detach" });
			const until = f.clock.now() + GRACE;
			await f.until(() => f.ctx.planner.status(doc.id).state === "grace");
			expect(f.ctx.planner.status(doc.id)).toEqual({ state: "grace", login: admin, until });

			const other = await f.connect(writer);
			other.send({ type: "attach", version: 1, document: doc.id });
			expect(await refusedAndClosed(other)).toEqual({
				refused: {
					type: "refused",
					code: "planner-attached",
					message: `${admin} disconnected from this document and keeps it until ${new Date(until).toISOString()} unless they connect again. A document has one agent connected at a time.`,
				},
				code: 4409,
			});

			// The same account comes back within it and keeps the document.
			await f.clock.advance(GRACE - 1);
			const again = await f.attach(admin, doc.id);
			expect(f.ctx.planner.status(doc.id)).toEqual({ state: "attached", login: admin });
			again.socket.terminate();
			await f.until(() => f.ctx.planner.status(doc.id).state === "grace");

			// A drop runs the grace period too; when it ends any eligible account can attach.
			await f.clock.advance(GRACE);
			expect(f.ctx.planner.status(doc.id)).toEqual({ state: "unattached" });
			expect((await f.attach(writer, doc.id)).attached.document.id).toBe(doc.id);
			expect(
				events.filter((e) => e.type === "planner.status").map((e) => (e as { state: string }).state),
			).toEqual(["attached", "grace", "attached", "grace", "unattached", "attached"]);
		});

		test("PLANNER_ATTACH_GRACE_MS=0 releases the document at once", async () => {
			const { f, doc, admin, writer } = await start({ PLANNER_ATTACH_GRACE_MS: "0" });
			const { socket } = await f.attach(admin, doc.id);
			socket.send({ type: "detach" });
			await socket.closed;
			await f.until(() => f.ctx.planner.status(doc.id).state === "unattached");
			expect((await f.attach(writer, doc.id)).attached.document.id).toBe(doc.id);
		});

		test("the owner's browser sign-out refuses sign-in-required (4401) at once and releases the document, no grace", async () => {
			const { f, doc, admin, writer } = await start();
			const { socket } = await f.attach(admin, doc.id);
			await f.signOut(admin);
			expect(await refusedAndClosed(socket)).toEqual({
				refused: {
					type: "refused",
					code: "sign-in-required",
					message: `The Chopin browser sign-in that connected ${admin} to this document ended, so the connection was released. Sign in to Chopin at ${f.publicUrl} in a browser as ${admin}, then connect again.`,
				},
				code: 4401,
			});
			expect(f.ctx.planner.status(doc.id)).toEqual({ state: "unattached" });
			expect((await f.attach(writer, doc.id)).attached.document.id).toBe(doc.id);
		});

		test("a sign-out during the grace period ends it", async () => {
			const { f, doc, admin, writer } = await start();
			const { socket } = await f.attach(admin, doc.id);
			socket.send({ type: "detach" });
			await socket.closed;
			await f.until(() => f.ctx.planner.status(doc.id).state === "grace");
			await f.signOut(admin);
			expect(f.ctx.planner.status(doc.id)).toEqual({ state: "unattached" });
			expect((await f.attach(writer, doc.id)).attached.document.id).toBe(doc.id);
		});

		test("the sign-in expiring refuses sign-in-required (4401)", async () => {
			const { f, doc, admin } = await start({ SESSION_TTL_MS: "600000" });
			const { socket } = await f.attach(admin, doc.id);
			await f.clock.advance(600_000);
			expect((await refusedAndClosed(socket)).code).toBe(4401);
		});

		test("a repository writer's reset refuses access-revoked (4403) with its message; readers cannot reset", async () => {
			const { f, doc, admin, writer } = await start();
			const { socket } = await f.attach(admin, doc.id);
			const reader = await f.signIn(f.cast.reader);
			const denied = await f.request("POST", `/api/documents/${doc.id}/planner/reset`, undefined, reader);
			expect(denied.status).toBe(403);
			expect((await denied.json()).code).toBe("repository-forbidden");
			expect((await f.request("POST", `/api/documents/${doc.id}/planner/reset`)).status).toBe(401);
			expect(f.ctx.planner.status(doc.id).state).toBe("attached");

			const jar = await f.signIn(writer);
			const res = await f.request("POST", `/api/documents/${doc.id}/planner/reset`, undefined, jar);
			expect(res.status).toBe(200);
			expect(await res.json()).toEqual({ reset: true });
			expect(await refusedAndClosed(socket)).toEqual({
				refused: {
					type: "refused",
					code: "access-revoked",
					message: `A repository writer reset this document's connection, so ${admin} is no longer connected. Connect again to resume.`,
				},
				code: 4403,
			});
			// No grace: anyone eligible, the same account included, attaches at once.
			expect((await f.attach(admin, doc.id)).attached.document.id).toBe(doc.id);
		});

		test("a reset during the grace period ends it", async () => {
			const { f, doc, admin, writer } = await start();
			const { socket } = await f.attach(admin, doc.id);
			socket.terminate();
			await f.until(() => f.ctx.planner.status(doc.id).state === "grace");
			const jar = await f.signIn(writer);
			expect(
				await (await f.request("POST", `/api/documents/${doc.id}/planner/reset`, undefined, jar)).json(),
			).toEqual({
				reset: true,
			});
			expect(f.ctx.planner.status(doc.id)).toEqual({ state: "unattached" });
		});

		test("archiving or deleting the document refuses access-revoked (4403)", async () => {
			const { f, doc, admin } = await start();
			const { socket } = await f.attach(admin, doc.id);
			await f.ctx.domain.documents.archive(doc.id);
			expect(await refusedAndClosed(socket)).toEqual({
				refused: {
					type: "refused",
					code: "access-revoked",
					message: wording.documentGone(admin, "archived"),
				},
				code: 4403,
			});
			const other = await f.createDocument({ title: "Second" });
			const second = await f.attach(admin, other.id);
			await f.ctx.domain.documents.softDelete(other.id);
			expect((await refusedAndClosed(second.socket)).code).toBe(4403);
			expect(f.ctx.planner.status(other.id).state).toBe("unattached");
		});
	});
}

describe("rechecks (github)", () => {
	test("every 5 minutes: push access lost at GitHub refuses access-revoked (4403)", async () => {
		f = await AgentFixture.start({ mode: "github" });
		const doc = await f.createDocument();
		await f.signIn("hubot");
		const { socket } = await f.attach("hubot", doc.id);
		const checks = () => f!.gh!.requests({ path: "/api/v3/repos/score-team/score" }).length;
		const before = checks();
		await f.clock.advance(5 * 60_000);
		await f.ctx.planner.settled();
		expect(checks()).toBe(before + 1);
		expect(f.ctx.planner.status(doc.id).state).toBe("attached");
		f.gh!.setPermission("score-team/score", "hubot", "read");
		await f.clock.advance(5 * 60_000);
		expect(await refusedAndClosed(socket)).toEqual({
			refused: {
				type: "refused",
				code: "access-revoked",
				message: wording.accessLost("hubot", "score-team/score"),
			},
			code: 4403,
		});
		expect(f.ctx.planner.status(doc.id).state).toBe("unattached");
	});

	test("a GitHub outage during a periodic check leaves the connection open", async () => {
		f = await AgentFixture.start({ mode: "github" });
		const doc = await f.createDocument();
		await f.signIn("hubot");
		const { socket } = await f.attach("hubot", doc.id);
		const before = f.gh!.requests({ path: "/api/v3/repos/score-team/score" }).length;
		f.gh!.inject({ kind: "status", status: 502, pathPrefix: "/api/v3/repos", times: 10 });
		await f.clock.advance(5 * 60_000);
		await f.ctx.planner.settled();
		expect(f.gh!.requests({ path: "/api/v3/repos/score-team/score" }).length).toBeGreaterThan(before);
		expect(f.ctx.planner.status(doc.id).state).toBe("attached");
		f.gh!.clearFaults();
		// Later checks still run and still find the access lost.
		f.gh!.removePermission("score-team/score", "hubot");
		await f.clock.advance(5 * 60_000);
		expect((await refusedAndClosed(socket)).code).toBe(4403);
	});

	test("an attach in progress when the owner signs out is refused sign-in-required (4401)", async () => {
		f = await AgentFixture.start({ mode: "github" });
		const doc = await f.createDocument();
		await f.signIn("hubot");
		const socket = await f.connect("hubot");
		f.gh!.inject({ kind: "hang", pathPrefix: "/api/v3/repos", times: 2 });
		socket.send({ type: "attach", version: 1, document: doc.id });
		await f.until(() => f!.gh!.held > 0, "the permission check to reach GitHub");
		await f.signOut("hubot");
		f.gh!.releaseHeld();
		const refused = await socket.expect("refused");
		expect(refused.code).toBe("sign-in-required");
		expect((await socket.closed).code).toBe(4401);
	});

	test("a reset landing while an attach is checked refuses it access-revoked", async () => {
		f = await AgentFixture.start({ mode: "github" });
		const doc = await f.createDocument();
		await f.signIn("hubot");
		const first = await f.connect("hubot");
		first.send({ type: "attach", version: 1, document: doc.id });
		await first.expect("attached");
		first.send({ type: "detach" });
		await first.closed;
		const socket = await f.connect("hubot");
		f.gh!.inject({ kind: "hang", pathPrefix: "/api/v3/repos" });
		socket.send({ type: "attach", version: 1, document: doc.id });
		await f.until(() => f!.gh!.held > 0, "the permission check to reach GitHub");
		expect(f.ctx.planner.reset(doc.id)).toBe(true);
		f.gh!.releaseHeld();
		expect(await socket.expect("refused")).toEqual({
			type: "refused",
			code: "access-revoked",
			message: wording.reset("hubot"),
		});
		expect((await socket.closed).code).toBe(4403);
	});
});
