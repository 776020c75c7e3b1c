// Hostile input on the machine control channel (chopin.machine.v1, the daemon's link) of a real server with a
// really paired machine: every client message shape, generated from the zod schemas and mutated from real
// messages, plus broken, binary and oversized frames, before hello and after welcome. Each is accepted or answered
// as docs/machines.md says (error malformed-message/message-too-large then 1008/1009, a refusal's revoked and
// close); never 1011 or a dropped socket, nothing echoes a planted credential, memory back to baseline.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import {
	connectMachine,
	hello,
	LOCAL_ENV,
	type MachineClient,
	pairLocally,
	type Target,
} from "../../apps/server/src/testing/machines";
import { startTestServer, type TestServer } from "../../apps/server/src/testing/server";
import { signInLocally } from "../../apps/server/src/testing/sign-in";
import { MACHINE_REFUSALS } from "../../packages/agent-link/src/machine/protocol";
import { machineClientMessageSchema } from "../../packages/agent-link/src/machine/schemas";
import { expectAftermath, newTally, SEED, tryCases, within } from "./support/cases";
import { machineCloses } from "./support/documented";
import { settledHeap } from "./support/memory";
import { brokenFrames, mutationsOf, plantedStrings } from "./support/mutations";
import { realLookingToken, searchSources } from "./support/secrets-sweep";
import { arbitraryFor } from "./support/zod-arbitrary";

const CASES = Number(process.env.RELIABILITY_MACHINE_CASES ?? 1500);
const planted = [realLookingToken("chopin_m_"), realLookingToken("chopin_p_"), realLookingToken("chopin_r_")];
const plant = plantedStrings(planted);

const counts = newTally();
const links = { reconnects: 0, repaired: 0 };
let server: TestServer;
let target: Target;
let credential: string;
let machine: MachineClient | undefined;

async function pair(): Promise<void> {
	const { jar } = await signInLocally(target, "ana");
	({ credential } = await pairLocally(target, jar, { repositories: ["octo/score", "octo/other"] }));
}

beforeAll(async () => {
	server = await startTestServer({ env: LOCAL_ENV });
	target = { fetch: (req) => server.fetch(req), publicUrl: server.context.config.publicUrl };
	await pair();
});

afterAll(async () => {
	machine?.ws.terminate();
	await server?.close();
	console.log(
		`reliability/hostile-machine: ${counts.tried} inputs tried (${counts.accepted} accepted, ${counts.refused} answered with an error or refusal, ${links.reconnects} reconnects, ${links.repaired} re-pairings), heap ${counts.heapMiB >= 0 ? "+" : ""}${counts.heapMiB.toFixed(1)} MiB after, ${counts.failures} failures`,
	);
});

const helloMessage = hello(["octo/score", "octo/other"]);
const {
	type: _hello,
	version: _version,
	...state
} = helloMessage as Extract<typeof helloMessage, { type: "hello" }>;
const examples: unknown[] = [
	helloMessage,
	{ type: "report", ...state, runner: { available: false, reason: "No ACP command is configured." } },
	{ type: "planner-event", document: "doc_abcdefghijklmnop", event: "started", reason: "Started." },
	{ type: "run-claim", run: "run_abcdefghijklmnop" },
	...fc.sample(arbitraryFor(machineClientMessageSchema), { numRuns: 12, seed: SEED }),
];

type Case = { phase: "first" | "welcomed"; frame: string | Uint8Array };
const messages = fc.oneof(
	{ arbitrary: arbitraryFor(machineClientMessageSchema, { plant }), weight: 3 },
	{ arbitrary: fc.constantFrom(...examples).chain((example) => mutationsOf(example, plant)), weight: 5 },
);
const cases: fc.Arbitrary<Case> = fc.record({
	phase: fc.constantFrom<Case["phase"]>("first", "welcomed"),
	frame: fc.oneof(
		{ arbitrary: messages.map((m) => JSON.stringify(m) ?? "null"), weight: 12 },
		{ arbitrary: brokenFrames, weight: 2 },
		{ arbitrary: fc.uint8Array({ maxLength: 64 }), weight: 1 },
	),
});

/** A control channel, without hello. A refused upgrade (the machine lost its repositories) pairs again. */
async function open(): Promise<MachineClient> {
	links.reconnects++;
	try {
		return await connectMachine(server.url, credential);
	} catch (error) {
		if (!String(error).includes("machine-revoked")) throw error;
		links.repaired++;
		await pair();
		return connectMachine(server.url, credential);
	}
}

/** A channel that said hello and got welcome, reused until a case closes it. */
async function welcomed(): Promise<MachineClient> {
	if (machine) return machine;
	const client = await open();
	client.send(helloMessage);
	const welcome = await within(client.next(), "welcome");
	if (welcome.type !== "welcome") throw new Error(`expected welcome, got ${JSON.stringify(welcome)}`);
	machine = client;
	return client;
}

/** Sends one case; once the server has read and handled it, takes what came back and whether it closed. */
async function runCase(c: Case) {
	let client: MachineClient;
	if (c.phase === "first") {
		machine?.ws.terminate();
		machine = undefined;
		client = await open();
	} else client = await welcomed();
	client.ws.send(c.frame);
	const closed = client.closed.then((close) => ({ close }));
	// The pong comes after the server read the frame; then its handling (a hello's welcome, a report) settles.
	await within(Promise.race([client.roundTrip(), closed]), "pong or close");
	await within(server.context.machines.control.settled(), "settled");
	await within(Promise.race([client.roundTrip(), closed]), "pong or close");
	const answers = client.queued.splice(0);
	const close = await Promise.race([closed, Bun.sleep(0).then(() => undefined)]);
	if (close) {
		if (client === machine) machine = undefined;
	} else if (c.phase === "first") {
		if (answers.some((a) => a.type === "welcome")) machine = client;
		else client.ws.terminate();
	}
	return { answers, close: close?.close };
}

function judge(result: Awaited<ReturnType<typeof runCase>>): string | undefined {
	if (searchSources(planted, [{ name: "answer", text: JSON.stringify(result) }]).length)
		return "an answer echoes a planted credential";
	const close = result.close?.code;
	if (close === 1011) return "closed 1011";
	if (close === 1006) return "dropped without a close frame (1006)";
	if (close !== undefined && !machineCloses.has(close))
		return `closed ${close}, which docs/machines.md does not list`;
	for (const answer of result.answers) {
		if (answer.type === "error") {
			const expected = answer.code === "message-too-large" ? 1009 : 1008;
			if (close !== expected) return `error ${answer.code} closed ${close}, documented ${expected}`;
		}
		if (answer.type === "revoked" && close !== MACHINE_REFUSALS[answer.code].close)
			return `revoked ${answer.code} closed ${close}`;
	}
	return undefined;
}

test("every control-channel message shape, generated and mutated, is accepted or answered as documented", async () => {
	const base = await settledHeap();
	await tryCases(cases, CASES, counts, async (c) => {
		const result = await runCase(c);
		return {
			refused: result.answers.some((a) => a.type === "error" || a.type === "revoked"),
			problem: judge(result),
			detail: () => JSON.stringify(result),
		};
	});
	machine?.ws.terminate();
	machine = undefined;
	// Still serving: a hello is welcomed as before.
	await welcomed();
	counts.heapMiB = await expectAftermath(base, server.logs, planted);
	expect(server.logs.filter((line) => line.level === "error")).toEqual([]);
}, 120_000);

test("a frame over 256 KiB is error message-too-large, then 1009", async () => {
	const client = await welcomed();
	machine = undefined;
	client.send({ ...examples[1]!, pad: "x".repeat(300 * 1024) } as never);
	expect(await within(client.next(), "error")).toMatchObject({ type: "error", code: "message-too-large" });
	expect((await within(client.closed, "close")).code).toBe(1009);
});
