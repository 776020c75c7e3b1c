/**
 * resume and restart: a backend whose link drops while it waits on questions, and which
 * reconnects with what closed settled with. resume reconnects once with connectAgent; restart
 * follows the restart-notice rule with reconnectAgent on a ManualClock it advances itself.
 */
import { Backoff } from "../../backoff";
import { ManualClock } from "../../clock";
import type { AgentLink } from "../link";
import type { QuestionResult } from "../questions";
import type { Session } from "../session";
import {
	closedSummary,
	errorSummary,
	type Json,
	type Scenario,
	type ScenarioContext,
	strip,
} from "./scenario";

export interface ResumeParams {
	/** How many sessions to wait for; each asks question once started. */
	sessions?: number;
	question: Json;
	/** resume only: withdraw this question (by index) while the link is down. */
	cancelWhileDown?: number;
	/** resume only: the first session asks this while the link is down. */
	askWhileDown?: Json;
	/** restart only: the caller's backoff after the restart window (one fixed delay). */
	backoffMs?: number;
}

/** Connects, waits for the sessions to start and ask, and returns them with the link. */
async function connectAndAsk(context: ScenarioContext, log: Json[], clock?: ManualClock) {
	const { client, target, WebSocket, params } = context;
	const p = params as ResumeParams;
	const wanted = p.sessions ?? 1;
	const started: Session[] = [];
	let allStarted: () => void = () => {};
	const ready = new Promise<void>((resolve) => {
		allStarted = resolve;
	});
	const options = {
		url: target.url,
		token: target.token,
		document: target.document,
		WebSocket,
		clock,
		handlers: {
			start(session: Session) {
				log.push({ event: "start", session: session.id });
				started.push(session);
				if (started.length === wanted) allStarted();
			},
			turn() {},
			stop(session: Session, run?: string) {
				log.push(strip({ event: "stop", session: session.id, run }));
				return { ok: true };
			},
			resume: () => ({ ok: true }),
			destroy(session: Session) {
				log.push({ event: "destroy", session: session.id });
			},
			restarting(reconnectWithinMs: number) {
				log.push({ event: "restarting", reconnectWithinMs });
			},
		},
	};
	const link = await client.connectAgent(options);
	await ready;
	const answers = started.map((session) => session.ask(p.question as never));
	log.push({ event: "asked", requests: answers.map((asked) => asked.request) });
	return { link, options, answers, started };
}

const settled = (answers: Promise<QuestionResult>[]) =>
	Promise.all(answers).then((results) => strip(results));

export const resumeScenario: Scenario = async (context) => {
	const log: Json[] = [];
	const summary = (error: unknown) => errorSummary(error, context.target.token);
	let first: Awaited<ReturnType<typeof connectAndAsk>>;
	try {
		first = await connectAndAsk(context, log);
	} catch (error) {
		return { error: summary(error), log };
	}
	const dropped = await first.link.closed;
	log.push({ event: "closed", closed: closedSummary(dropped) });
	const p = context.params as ResumeParams;
	if (p.cancelWhileDown !== undefined)
		log.push({ event: "cancelled", ok: first.answers[p.cancelWhileDown]!.cancel() });
	if (p.askWhileDown) first.answers.push(first.started[0]!.ask(p.askWhileDown as never));
	let second: AgentLink;
	try {
		second = await context.client.connectAgent({ ...first.options, resume: dropped.resume });
	} catch (error) {
		const resume = dropped.resume;
		// A refusal with retry keeps everything waiting; any other ends it and settles the questions.
		if (resume?.usable) return strip({ log, error: summary(error), usable: true, held: resume.sessions });
		return strip({ log, error: summary(error), results: await settled(first.answers), usable: false });
	}
	log.push({ event: "resumed", sessions: [...second.sessions.keys()] });
	const results = await settled(first.answers);
	log.push({ event: "settled" });
	const closed = await second.closed;
	return strip({ log, results, closed: closedSummary(closed), usable: dropped.resume?.usable });
};

export const restartScenario: Scenario = async (context) => {
	const log: Json[] = [];
	const clock = new ManualClock();
	const summary = (error: unknown) => errorSummary(error, context.target.token);
	let first: Awaited<ReturnType<typeof connectAndAsk>>;
	try {
		first = await connectAndAsk(context, log, clock);
	} catch (error) {
		return { error: summary(error), log };
	}
	const dropped = await first.link.closed;
	log.push({ event: "closed", closed: closedSummary(dropped) });
	const start = clock.now();
	const p = context.params as ResumeParams;
	let second: AgentLink;
	try {
		second = await context.client.reconnectAgent(first.options, dropped, {
			clock,
			backoff: Backoff.schedule([p.backoffMs ?? 5_000]),
			onEvent(event) {
				if (event.type === "attempt")
					log.push({ event: "attempt", attempt: event.attempt, at: clock.now() - start });
				if (event.type === "failed")
					log.push({ event: "failed", attempt: event.attempt, error: summary(event.error) });
				if (event.type === "waiting") {
					log.push({ event: "waiting", ms: event.ms, rule: event.rule });
					// The helper sleeps on this clock right after reporting the wait.
					void clock.advance(event.ms);
				}
			},
		});
	} catch (error) {
		return strip({ log, error: summary(error) });
	}
	const results = await settled(first.answers);
	const closed = await second.detach();
	return strip({ log, results, closed: closedSummary(closed) });
};
