// Spec "Resuming after a dropped link", What still ends it for good, for a Planner already disconnected (its
// resumable link dropped with a question open and a live run): the owner's sign-out or its expiry, archiving or
// deleting the document each withdraw the question, show the run stopped, release the document, and leave
// nothing for a later resume; no time passing does. (A reset, a detach, a Stop that withdraws the last question and an attach that
// does not resume are in resume.test.ts; a revoked machine in machine-planners.test.ts.)
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { AgentFixture } from "../testing/agent-fixture";

setDefaultTimeout(20_000);

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const RESUMABLE = { features: "resumable-sessions" };

/** alice's resumable Planner asked q1 and reported a live run r1, then its link dropped: disconnected. */
async function disconnected(env: Record<string, string> = {}) {
	f = await AgentFixture.start({ env });
	const fx = f;
	const doc = await fx.createDocument();
	await fx.signIn("alice");
	const { socket } = await fx.attach("alice", doc.id, RESUMABLE);
	const turn = await fx.chatTurn(socket, doc.id, "bob");
	const session = turn.session;
	await fx.askAndRun(socket, doc.id, turn, { method: "confirm", title: "Ship it?", message: "" });
	socket.terminate();
	await fx.until(() => fx.ctx.planner.status(doc.id).state === "disconnected", "the Planner disconnected");
	await fx.until(async () => (await fx.ctx.domain.runs.list(doc.id))[0]?.disconnected === true, "the card");

	/** The end took everything: the question withdrawn, the run stopped, the document released. */
	const ended = async () => {
		await fx.until(async () => {
			const decision = await fx.ctx.domain.decisions.findByRequest(doc.id, "q1");
			return decision?.settledReason === "withdrawn";
		}, "the Decision withdrawn");
		await fx.until(
			async () => (await fx.ctx.domain.runs.list(doc.id))[0]?.displayStatus === "stopped",
			"the run shown stopped",
		);
		expect((await fx.ctx.domain.runs.list(doc.id))[0]?.disconnected).toBeUndefined();
		expect(fx.ctx.planner.status(doc.id)).toEqual({ state: "unattached" });
		expect(fx.ctx.planner.using(doc.id)).toBe(false);
	};
	/** A later resume of the same session finds nothing. */
	const resumesNothing = async () => {
		const { socket: back } = await fx.attach("alice", doc.id, RESUMABLE);
		back.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		expect(await back.expect("resumed")).toEqual({ type: "resumed", sessions: [] });
	};
	/** The same client resumes its session and question. */
	const resumes = async () => {
		const { socket: back } = await fx.attach("alice", doc.id, RESUMABLE);
		back.send({ type: "resume", sessions: [{ session, requests: ["q1"] }] });
		expect(await back.expect("resumed")).toEqual({
			type: "resumed",
			sessions: [{ session, requests: ["q1"] }],
		});
	};
	return { f: fx, doc, ended, resumesNothing, resumes };
}

test("nothing times it out: a day later it is still disconnected, its question open, and it resumes", async () => {
	const { f, doc, resumes } = await disconnected();
	await f.clock.advance(24 * 60 * 60_000);
	expect(f.ctx.planner.status(doc.id)).toEqual({ state: "disconnected", login: "alice" });
	expect((await f.ctx.domain.decisions.findByRequest(doc.id, "q1"))?.status).toBe("open");
	await resumes();
});

describe("what ends a disconnected Planner for good", () => {
	test("the owner's browser sign-out", async () => {
		const { f, ended, resumesNothing } = await disconnected();
		await f.signOut("alice");
		await ended();
		await f.signIn("alice");
		await resumesNothing();
	});

	test("the owner's sign-in expiring", async () => {
		const { f, ended, resumesNothing } = await disconnected({ SESSION_TTL_MS: "600000" });
		await f.clock.advance(600_000);
		await ended();
		await f.signIn("alice");
		await resumesNothing();
	});

	test("archiving the document", async () => {
		const { f, doc, ended } = await disconnected();
		await f.ctx.domain.documents.archive(doc.id);
		await ended();
	});

	test("deleting the document", async () => {
		const { f, doc, ended } = await disconnected();
		await f.ctx.domain.documents.softDelete(doc.id);
		await ended();
	});
});
