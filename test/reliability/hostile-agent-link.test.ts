// Hostile input on a real attached agent link (/api/v1/agent): every client-to-server message shape, generated
// from the zod schemas and mutated from the spec's examples, plus broken and binary frames, sent as the first frame
// and on an attached link. Each is accepted or answered with a documented error/refusal and its close code; never
// 1011, never a dropped socket; no answer echoes a credential the input carried; memory returns to baseline.
import { afterAll, beforeAll, test } from "bun:test";
import fc from "fast-check";
import { AgentFixture, PUBLIC_URL } from "../../apps/server/src/testing/agent-fixture";
import type { AgentSocket } from "../../apps/server/src/testing/agent-socket";
import { clientMessageSchema } from "../../packages/agent-link/src/schemas/client-messages";
import { clientMessages } from "../../packages/agent-link/src/testing/examples";
import { expectAftermath, newTally, tryCases, within } from "./support/cases";
import { agentLinkBareCloses, agentLinkCodes, documentedCodes } from "./support/documented";
import { settledHeap } from "./support/memory";
import { brokenFrames, mutationsOf, plantedStrings } from "./support/mutations";
import { realLookingToken, searchSources } from "./support/secrets-sweep";
import { arbitraryFor } from "./support/zod-arbitrary";

const CASES = Number(process.env.RELIABILITY_AGENT_CASES ?? 2700);
const UPGRADES = Number(process.env.RELIABILITY_AGENT_UPGRADES ?? 300);
const planted = [realLookingToken("chopin_m_"), realLookingToken("chopin_p_"), realLookingToken("chopin_r_")];
const plant = plantedStrings(planted);

const counts = newTally();
let reconnects = 0;
let fx: AgentFixture;
let documentId: string;
let link: AgentSocket | undefined;

beforeAll(async () => {
	fx = await AgentFixture.start();
	await fx.signIn("alice");
	documentId = (await fx.createDocument({ by: "alice" })).id;
});

afterAll(async () => {
	await fx?.close();
	console.log(
		`reliability/hostile-agent-link: ${counts.tried} inputs tried (${counts.accepted} accepted, ${counts.refused} answered with an error or refusal, ${reconnects} reconnects), heap ${counts.heapMiB >= 0 ? "+" : ""}${counts.heapMiB.toFixed(1)} MiB after, ${counts.failures} failures`,
	);
});

type Case = { phase: "first" | "attached"; frame: string | Uint8Array };

const examples = Object.values(clientMessages);
const messages = fc.oneof(
	{ arbitrary: arbitraryFor(clientMessageSchema, { plant }), weight: 3 },
	{ arbitrary: fc.constantFrom(...examples).chain((example) => mutationsOf(example, plant)), weight: 5 },
);
const frames = fc.oneof(
	{ arbitrary: messages.map((m) => JSON.stringify(m) ?? "null"), weight: 12 },
	{ arbitrary: brokenFrames, weight: 2 },
	{ arbitrary: fc.uint8Array({ maxLength: 64 }), weight: 1 },
);
const cases: fc.Arbitrary<Case> = fc.record({
	phase: fc.constantFrom<Case["phase"]>("first", "attached", "attached", "attached"),
	frame: frames,
});

/** An attached link, reused until a case closes it. */
async function attachedLink(): Promise<AgentSocket> {
	if (link) return link;
	reconnects++;
	const socket = await fx.connect("alice");
	socket.send({ type: "attach", version: 1, document: documentId });
	await within(socket.expect("attached"), "attached");
	link = socket;
	return socket;
}

/** A probe the server answers in order: once its answer is back, every frame before it was read. */
function probe(socket: AgentSocket): string {
	const toolCallId = `probe-${crypto.randomUUID()}`;
	socket.send({
		type: "host-tool-call",
		session: "probe",
		turn: "probe",
		toolCallId,
		toolName: "read_plan",
		input: "{}",
	});
	return toolCallId;
}

/** Sends one case and reads until the probe's answer or the close; returns what came back. */
async function runCase(c: Case): Promise<{ answers: unknown[]; close?: { code: number; reason: string } }> {
	let socket: AgentSocket;
	if (c.phase === "first") {
		link?.terminate();
		link = undefined;
		reconnects++;
		socket = await fx.connect("alice");
	} else socket = await attachedLink();
	const answers: unknown[] = [];
	if (typeof c.frame === "string") socket.send(c.frame);
	else socket.sendBinary(c.frame);
	const token = c.phase === "attached" ? probe(socket) : undefined;
	try {
		for (;;) {
			const message = await within(socket.next(), "answer");
			answers.push(message);
			if (c.phase === "first" && (message.type === "attached" || message.type === "refused")) break;
			if (message.type === "host-tool-result" && message.toolCallId === token) break;
			if (message.type === "error" || message.type === "refused") break;
		}
	} catch (error) {
		if (!(error instanceof Error) || !error.message.startsWith("the socket closed")) throw error;
	}
	const closed = await Promise.race([socket.closed, Bun.sleep(0).then(() => undefined)]);
	const last = answers.at(-1) as { type?: string } | undefined;
	// An error or refusal is followed by the close: wait for it (bounded).
	const close =
		closed ??
		(last?.type === "error" || last?.type === "refused" ? await within(socket.closed, "close") : undefined);
	if (c.phase === "first" && last?.type === "attached" && !close) link = socket;
	else if (close || c.phase === "first") {
		if (socket === link) link = undefined;
		if (!close) socket.terminate();
	}
	return { answers, close };
}

const ECHOED_IDS = new Set(["session", "turn", "toolCallId", "request"]);

/** What makes an answer undocumented; undefined when it is fine. */
function judge(c: Case, result: Awaited<ReturnType<typeof runCase>>): string | undefined {
	// Ids the client chose come back as the protocol's correlation fields by design; any other text must not.
	const text = JSON.stringify(result, (key, value) => (ECHOED_IDS.has(key) ? undefined : value));
	if (searchSources(planted, [{ name: "answer", text }]).length)
		return "an answer echoes a planted credential";
	const close = result.close?.code;
	if (close === 1011) return "closed 1011";
	if (close === 1006) return "dropped without a close frame (1006)";
	for (const answer of result.answers as { type: string; code?: string }[]) {
		if (answer.type !== "error" && answer.type !== "refused") continue;
		const documented = agentLinkCodes.get(answer.code ?? "");
		if (!documented || documented.message !== answer.type)
			return `undocumented ${answer.type} ${answer.code}`;
		if (close !== undefined && close !== documented.close)
			return `${answer.type} ${answer.code} closed ${close}, documented ${documented.close}`;
	}
	if (
		close !== undefined &&
		!result.answers.some((a) => ["error", "refused"].includes((a as { type: string }).type))
	) {
		if (!agentLinkBareCloses.has(close)) return `closed ${close} with no error or refusal`;
		if (close === 1000 && !(typeof c.frame === "string" && c.frame.includes('"detach"')))
			return "closed 1000 without a detach";
	}
	return undefined;
}

test("every client message shape, generated and mutated, is accepted or answered as documented", async () => {
	const base = await settledHeap();
	await tryCases(cases, CASES, counts, async (c) => {
		const result = await runCase(c);
		return {
			refused: result.answers.some((a) => ["error", "refused"].includes((a as { type: string }).type)),
			problem: judge(c, result),
			detail: () => JSON.stringify(result),
		};
	});
	link?.terminate();
	link = undefined;
	// The server is still up and attaches as before.
	await attachedLink();
	counts.heapMiB = await expectAftermath(base, fx.server.logs, planted);
}, 120_000);

const headerText = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,80}$/);
const upgrades = fc.record({
	token: fc.oneof(fc.constant("alice"), fc.constant(null), plant, headerText),
	protocols: fc.oneof(
		fc.constantFrom(
			undefined,
			null,
			"chopin.agent.v1",
			"chopin.agent.v2, chopin.agent.v1",
			"chopin.machine.v1",
		),
		headerText,
	),
	origin: fc.option(fc.oneof(fc.constantFrom(PUBLIC_URL, "https://evil.example", "null"), headerText), {
		nil: undefined,
	}),
	features: fc.option(
		fc.oneof(fc.constantFrom("run-stage-deltas", "run-stage-deltas, x", ""), headerText, plant),
		{
			nil: undefined,
		},
	),
});

test("the upgrade with hostile headers is 101 or a refusal docs/errors.md lists", async () => {
	await tryCases(upgrades, UPGRADES, counts, async (u) => {
		const answer = await within(
			fx.open({
				...(u.token === "alice" ? { login: "alice" } : { token: u.token }),
				protocols: u.protocols,
				origin: u.origin,
				features: u.features,
			}),
			"the upgrade's answer",
		);
		answer.socket?.terminate();
		const headers = [...answer.headers].map(([k, v]) => `${k}: ${v}`).join("\n");
		let problem: string | undefined;
		if (searchSources(planted, [{ name: "answer", text: `${headers}\n${answer.body}` }]).length)
			problem = "the refusal echoes a planted credential";
		else if (answer.status >= 500 && answer.status !== 503) problem = `answered ${answer.status}`;
		else if (answer.status !== 101) {
			const code = (JSON.parse(answer.body || "{}") as { code?: string }).code;
			if (!code || !documentedCodes.has(code)) problem = `code ${code} is not in docs/errors.md`;
		}
		return { refused: answer.status !== 101, problem, detail: () => `${answer.status} ${answer.body}` };
	});
});

/** Arrays or objects nested `depth` deep, as text: built without recursion, as the server must read it. */
function nestedText(depth: number, kind: "array" | "object"): string {
	return kind === "array"
		? `${"[".repeat(depth)}${"]".repeat(depth)}`
		: `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

test("JSON nested past the limit anywhere in a frame is malformed-message and 1008, never 1011 (issue 16 item 4)", async () => {
	const base = await settledHeap();
	const deepCases = fc.record({
		phase: fc.constantFrom<Case["phase"]>("first", "attached"),
		example: fc.constantFrom(...examples),
		depth: fc.constantFrom(129, 1_000, 9_000, 100_000),
		kind: fc.constantFrom<"array" | "object">("array", "object"),
	});
	await tryCases(deepCases, 40, counts, async ({ phase, example, depth, kind }) => {
		// The nesting replaces the example's last field, so the frame is otherwise well-formed.
		const text = JSON.stringify(example);
		const frame = `${text.slice(0, -1)},"deep":${nestedText(depth, kind)}}`;
		const result = await runCase({ phase, frame });
		const error = result.answers.find((a) => (a as { type: string }).type === "error") as
			| { code?: string }
			| undefined;
		const problem =
			judge({ phase, frame }, result) ??
			(error?.code !== "malformed-message" || result.close?.code !== 1008
				? `not malformed-message and 1008: ${JSON.stringify(result).slice(0, 200)}`
				: undefined);
		return { refused: true, problem, detail: () => `${phase} ${kind} ${depth}` };
	});
	await expectAftermath(base, fx.server.logs, planted);
});
