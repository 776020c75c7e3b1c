/**
 * How fast the wire format is read and written: messages per second through parseClientFrame
 * (what the server runs on every frame a client sends) and encodeClientMessage (which encodes,
 * then runs that same parse) for typical frames. Not a test: it prints its figures.
 *
 *   bun bench/agent-link-parse.ts [seconds per figure, default 1]
 */
import {
	type ClientMessage,
	encodeClientMessage,
	FEATURES,
	parseClientFrame,
	type Stage,
} from "../packages/agent-link/src/index";

const seconds = Number(process.argv[2] ?? 1);
const options = { features: FEATURES };

const stage = (run: number, i: number): Stage => ({
	id: `run-${run}-stage-${i}`,
	name: `Implement step ${i} of the rollout`,
	parentIds: i > 0 ? [`run-${run}-stage-${i - 1}`] : undefined,
	kind: "tool",
	status: i < 60 ? "completed" : "running",
	started: 1_760_000_000 + i,
	...(i < 60 ? { ended: 1_760_000_030 + i } : {}),
});

const FRAMES: Record<string, ClientMessage> = {
	"text-delta part": {
		type: "part",
		session: "s1",
		turn: "t1",
		part: { type: "text-delta", id: "text-1", delta: "The pilot should start with the two teams that " },
	},
	"host-tool-call": {
		type: "host-tool-call",
		session: "s1",
		turn: "t1",
		toolCallId: "0f8c4a8e-8f4e-4a37-9c35-5b7f2e4d8a11",
		toolName: "edit_plan",
		input: JSON.stringify({ block: 3, digest: `sha256:${"ab".repeat(32)}`, text: "A small pilot first." }),
	},
	"runs, 64 cards of 64 stages": {
		type: "runs",
		session: "s1",
		active: Array.from({ length: 64 }, (_, c) => `run-${c}`),
		paused: [],
		cards: Array.from({ length: 64 }, (_, c) => ({
			id: `run-${c}`,
			name: `Workflow ${c}`,
			status: "running" as const,
			started: 1_760_000_000,
			updated: 1_760_000_100,
			stages: Array.from({ length: 64 }, (_, i) => stage(c, i)),
			earlierStages: 12,
			waiting: 0,
		})),
	},
};

/** Runs fn repeatedly for about `seconds` and returns calls per second. */
function rate(fn: () => void): number {
	for (let i = 0; i < 50; i++) fn();
	let calls = 0;
	const start = performance.now();
	const until = start + seconds * 1000;
	let now = start;
	while (now < until) {
		for (let i = 0; i < 20; i++) fn();
		calls += 20;
		now = performance.now();
	}
	return (calls * 1000) / (now - start);
}

const format = (n: number) => Math.round(n).toLocaleString("en-US");
const rows: string[][] = [["frame", "bytes", "parse msg/s", "parse MB/s", "encode msg/s"]];
for (const [name, message] of Object.entries(FRAMES)) {
	const text = encodeClientMessage(message, options);
	const bytes = Buffer.byteLength(text);
	const parse = rate(() => {
		if (!parseClientFrame(text, options).ok) throw new Error(`${name} did not parse`);
	});
	const encode = rate(() => encodeClientMessage(message, options));
	rows.push([name, format(bytes), format(parse), ((parse * bytes) / 1e6).toFixed(1), format(encode)]);
}

const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
for (const row of rows)
	console.log(
		row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  "),
	);
console.log(`\nBun ${Bun.version}, ${seconds} s per figure; encode includes the parse it runs.`);
