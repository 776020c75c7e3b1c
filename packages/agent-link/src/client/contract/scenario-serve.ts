/**
 * serve: a programmable backend. Each turn's prompt is a JSON program of steps (stream text,
 * call host and own tools, ask, report runs, make images, end); a prompt that is not JSON is
 * echoed. It logs every handler call and step outcome, and returns the log once the link closes.
 */
import type { Turn } from "../turn";
import { noisePng, toBase64 } from "./noise-png";
import { closedSummary, errorSummary, type Json, type Scenario, strip } from "./scenario";

export interface ServeParams {
	features?: string[];
	resumable?: boolean;
	/** start throws this message (start-failed). */
	startFails?: string;
	/** What stop and resume answer; default { ok: true }. */
	control?: { ok: boolean; message?: string };
	/** Offer steer-turn, answering with this. */
	steer?: { ok: boolean; message?: string };
}

/** Images of noise (or bytes that are no image): count of width × height, or one per sizes entry. */
export interface ImageSpec {
	width?: number;
	height?: number;
	count?: number;
	sizes?: [number, number][];
	garbage?: boolean;
	/** Every image the same bytes (for a tie); by default each is different. */
	same?: boolean;
	wait?: boolean;
}

/** One step of a turn's program. */
export type Step =
	| { text: string }
	| { reasoning: string }
	| { declare: string[] }
	| { ownTool: { name: string; input?: Json; result: Json; isError?: boolean } }
	| { host: { name: string; input?: Json } }
	| { waitAbort: true }
	| { ask: Json; options?: Json; cancel?: boolean }
	| { generateRuns: { cards: number; stages: number; nameLength: number } }
	/** An own tool result with images; wait: false emits it without waiting for it to be sent. */
	| { image: ImageSpec }
	/** An own tool result of text over the frame limit. */
	| { hugeResult: number }
	| { throw: string }
	| { end: "finished" | "failed" | "aborted"; message?: string }
	| { endTwice: true }
	/** Runs its steps at once, and records their outcomes together. */
	| { parallel: Step[] };

export const serveScenario: Scenario = async ({ client, target, WebSocket, params }) => {
	const p = params as ServeParams;
	const log: Json[] = [];
	const summary = (error: unknown) => errorSummary(error, target.token);
	// Turn handlers still finishing when the link closes (their steps settle as it closes).
	const handlers = new Set<Promise<void>>();

	const runStep = async (turn: Turn, step: Step): Promise<Json> => {
		if ("text" in step) return done(turn.text(step.text), "text");
		if ("reasoning" in step) return done(turn.reasoning(step.reasoning), "reasoning");
		if ("declare" in step) return done(turn.declareTools(step.declare), "declared");
		if ("ownTool" in step) {
			const { name, input, result, isError } = step.ownTool;
			const toolCallId = turn.toolCall(name, input ?? {});
			await turn.toolResult({ toolCallId, result, ...(isError ? { isError } : {}) });
			return { ownTool: toolCallId };
		}
		if ("host" in step) return strip(await turn.callHostTool(step.host.name, step.host.input ?? {}));
		if ("waitAbort" in step) {
			if (!turn.signal.aborted)
				await new Promise((resolve) => turn.signal.addEventListener("abort", resolve));
			return "aborted";
		}
		if ("ask" in step) {
			const asked = turn.session.ask(step.ask as never, (step.options ?? {}) as never);
			if (step.cancel) asked.cancel();
			return strip(await asked);
		}
		if ("generateRuns" in step) return { frames: turn.session.reportRuns(generateRuns(step.generateRuns)) };
		if ("image" in step) return makeImages(turn, step.image);
		if ("hugeResult" in step) {
			const toolCallId = turn.toolCall("dump", {});
			await turn.toolResult({ toolCallId, result: "x".repeat(step.hugeResult) });
			return "sent";
		}
		if ("throw" in step) throw new Error(step.throw);
		if ("end" in step) return done(turn.end(step.end, step.message), `ended ${step.end}`);
		if ("endTwice" in step) {
			await turn.end();
			try {
				await turn.end();
				return "second end accepted";
			} catch (error) {
				return summary(error);
			}
		}
		if ("parallel" in step) {
			const outcomes = step.parallel.map((inner) => runStep(turn, inner).catch((error) => summary(error)));
			return Promise.all(outcomes);
		}
		throw new Error(`Unknown step ${JSON.stringify(step)}`);
	};

	const runTurn = async (turn: Turn): Promise<void> => {
		const steps: Json[] = [];
		const entry = strip({
			event: "turn",
			session: turn.session.id,
			turn: turn.id,
			tools: turn.tools.map((tool) => tool.name),
			model: turn.model,
			thinkingLevel: turn.thinkingLevel,
			attachments: turn.attachments.map((a) => a.name),
			message: turn.message,
			retry: turn.retry,
		}) as { [key: string]: Json };
		entry.steps = steps;
		log.push(entry);
		let program: Step[];
		try {
			program = JSON.parse(programText(turn.prompt));
		} catch {
			program = [{ text: `echo: ${turn.prompt}` }];
		}
		for (const step of program) {
			try {
				steps.push(await runStep(turn, step));
			} catch (error) {
				entry.error = summary(error);
				throw error;
			}
		}
	};

	try {
		const link = await client.connectAgent({
			url: target.url,
			token: target.token,
			document: target.document,
			features: p.features as never,
			resumable: p.resumable,
			WebSocket,
			handlers: {
				start(session) {
					log.push({ event: "start", session: session.id, mode: session.mode });
					if (p.startFails) throw new Error(p.startFails);
				},
				turn(turn) {
					const handler = runTurn(turn);
					handlers.add(handler);
					return handler.finally(() => handlers.delete(handler));
				},
				stop(session, run) {
					log.push(strip({ event: "stop", session: session.id, run }));
					return p.control ?? { ok: true };
				},
				resume(session, run) {
					log.push(strip({ event: "resume", session: session.id, run }));
					return p.control ?? { ok: true };
				},
				...(p.steer
					? {
							steer(turn: Turn, prompt: string) {
								log.push({ event: "steer", turn: turn.id, prompt });
								return p.steer!;
							},
						}
					: {}),
				destroy(session) {
					log.push({ event: "destroy", session: session.id });
				},
				restarting(reconnectWithinMs) {
					log.push({ event: "restarting", reconnectWithinMs });
				},
			},
		});
		const closed = await link.closed;
		await Promise.allSettled([...handlers]);
		return strip({ attached: link.attached, log, closed: closedSummary(closed) });
	} catch (error) {
		return { error: summary(error), log };
	}
};

/**
 * The program in a prompt: the prompt itself, or, for a real Chopin server's Chat turn
 * (`@ana: @chopin [steps]`), what follows the handles, from the first "[".
 */
function programText(prompt: string): string {
	if (!prompt.startsWith("@")) return prompt;
	const start = prompt.indexOf("[");
	return start === -1 ? prompt : prompt.slice(start);
}

/** Waits for what a step started, then names the step. */
async function done(work: unknown, label: string): Promise<Json> {
	await work;
	return label;
}

/** A report of cards × stages, with names of nameLength characters. */
function generateRuns(spec: { cards: number; stages: number; nameLength: number }) {
	const name = (label: string) => `${label} `.padEnd(spec.nameLength, "x");
	const cards = Array.from({ length: spec.cards }, (_, c) => ({
		id: `run-${c}`,
		name: name(`Run ${c}`),
		status: "running" as const,
		started: 1_760_000_000,
		updated: 1_760_000_100,
		waiting: 0,
		stages: Array.from({ length: spec.stages }, (_, s) => ({
			id: `run-${c}-stage-${s}`,
			name: name(`Stage ${s}`),
			status: "completed" as const,
			started: 1_760_000_000 + s,
		})),
	}));
	return { active: cards.map((card) => card.id), paused: [], cards };
}

/** An own tool result with count images of noise (or bytes that are no image), each different. */
async function makeImages(turn: Turn, spec: ImageSpec): Promise<Json> {
	const sizes =
		spec.sizes ?? Array.from({ length: spec.count ?? 1 }, () => [spec.width ?? 1, spec.height ?? 1]);
	const images = sizes.map(([width, height], i) => {
		const bytes = spec.garbage
			? Uint8Array.from({ length: width * height * 4 }, (_, n) => (n * 7919 + i) & 0xff)
			: noisePng(width, height, 0x2545f491 + (spec.same ? 0 : i));
		return {
			type: "image",
			data: toBase64(bytes),
			mimeType: "image/png",
			alt: `noise ${i}`,
			bytes: bytes.length,
		};
	});
	const content = [{ type: "text", text: "Made it." }, ...images.map(({ bytes: _bytes, ...block }) => block)];
	const toolCallId = turn.toolCall("make_image", { count: images.length });
	const sent = turn.toolResult({ toolCallId, result: { content } });
	if (spec.wait === false) sent.catch(() => {});
	else await sent;
	return { imageBytes: images.map((image) => image.bytes) };
}
