// Hostile input on the HTTP APIs of a real server (Bun.serve on port 0, requests over loopback): the pairing
// start/poll/claim/confirm, the connector endpoints a machine calls, and the page JSON APIs a browser calls, with
// bodies generated from the zod schemas and mutated from real ones, junk path ids, and with or without a session,
// a bearer, the Chopin-Client header, CSRF's Origin and a JSON content type. Each is accepted or answered with a
// status and a code docs/errors.md lists, never a 500; no answer echoes a planted credential; memory settles.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { startBuildSchema } from "../../apps/server/src/builds/routes";
import { memberAnswerSchema } from "../../apps/server/src/decisions/answers";
import { cliRequest, LOCAL_ENV, pairingStartBody, pairLocally } from "../../apps/server/src/testing/machines";
import { startTestServer, type TestServer } from "../../apps/server/src/testing/server";
import { type CookieJar, signInLocally } from "../../apps/server/src/testing/sign-in";
import { formatClientHeader } from "../../packages/agent-link/src/machine/protocol";
import {
	pairingClaimSchema,
	pairingConfirmSchema,
	pairingStartSchema,
	plannerCredentialRequestSchema,
} from "../../packages/agent-link/src/machine/schemas";
import { questionSchema } from "../../packages/agent-link/src/schemas/questions";
import { questions } from "../../packages/agent-link/src/testing/examples";
import { expectAftermath, newTally, tryCases } from "./support/cases";
import { documentedCodes } from "./support/documented";
import { settledHeap } from "./support/memory";
import { junkValues, mutationsOf, plantedStrings, strangeStrings } from "./support/mutations";
import { realLookingToken, searchSources } from "./support/secrets-sweep";
import { arbitraryFor, type ZodLike } from "./support/zod-arbitrary";

const CASES = Number(process.env.RELIABILITY_HTTP_CASES ?? 5500);
const planted = [realLookingToken("chopin_m_"), realLookingToken("chopin_p_"), realLookingToken("chopin_r_")];
const plant = plantedStrings(planted);

const counts = newTally();
const statuses = new Map<number, number>();
let server: TestServer;
let jar: CookieJar;
let credential: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
	server = await startTestServer({ env: LOCAL_ENV });
	const target = { fetch: (req: Request) => server.fetch(req), publicUrl: server.context.config.publicUrl };
	({ jar } = await signInLocally(target, "ana"));
	const paired = await pairLocally(target, jar);
	credential = paired.credential;
	ids.machine = paired.machineId;
	const started = await cliRequest(target, "POST", "/api/connector/pairings", { body: pairingStartBody() });
	ids.pairing = ((await started.json()) as { id: string }).id;
	const document = await server.context.domain.documents.create({
		repository: "octo/score",
		title: "Rollout plan",
		source: "# Rollout plan\n\nWe ship in two steps.\n",
		createdBy: "ana",
	});
	ids.document = document.id;
	const decision = await server.fetch(
		new Request(new URL(`/api/documents/${document.id}/decisions`, target.publicUrl), {
			method: "POST",
			headers: { cookie: jar.header(), origin: target.publicUrl, "content-type": "application/json" },
			body: JSON.stringify({ input: questions.select }),
		}),
	);
	ids.decision = ((await decision.json()) as { id: string }).id;
});

afterAll(async () => {
	await server?.close();
	const byStatus = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`);
	console.log(
		`reliability/hostile-http: ${counts.tried} inputs tried (${counts.accepted} accepted, ${counts.refused} refused; ${byStatus.join(" ")}), heap ${counts.heapMiB >= 0 ? "+" : ""}${counts.heapMiB.toFixed(1)} MiB after, ${counts.failures} failures`,
	);
});

/** A route: method, path with :params, and what its body looks like (a schema and/or real examples). */
interface Route {
	method: string;
	path: string;
	schema?: ZodLike;
	examples?: unknown[];
}

const routes: Route[] = [
	{
		method: "POST",
		path: "/api/connector/pairings",
		schema: pairingStartSchema,
		examples: [pairingStartBody()],
	},
	{ method: "GET", path: "/api/connector/pairings/:pairing" },
	{ method: "POST", path: "/api/connector/pairings/:pairing/claim", schema: pairingClaimSchema },
	{ method: "POST", path: "/api/connector/pairings/:pairing/confirm", schema: pairingConfirmSchema },
	{ method: "GET", path: "/api/connector/machine" },
	{ method: "POST", path: "/api/connector/planner", schema: plannerCredentialRequestSchema },
	{ method: "GET", path: "/api/connector/github-token" },
	{ method: "GET", path: "/api/connector/ping" },
	// The sockets' paths, asked without an upgrade (the upgrades themselves are the other hostile-* files').
	{ method: "GET", path: "/api/v1/machine" },
	{ method: "GET", path: "/api/v1/agent" },
	{
		method: "POST",
		path: "/auth/local/sign-in",
		examples: [{ login: "ana" }, { login: "ben", password: "x" }],
	},
	{ method: "GET", path: "/api/me" },
	{ method: "GET", path: "/api/machines" },
	{ method: "GET", path: "/api/machines/:machine" },
	{ method: "PUT", path: "/api/repositories/octo/score/machine", examples: [{ machine: null }] },
	{ method: "PUT", path: "/api/documents/:document/machine", examples: [{ machine: "m" }] },
	{ method: "GET", path: "/api/documents" },
	{
		method: "POST",
		path: "/api/documents",
		examples: [{ repository: "octo/score", title: "A plan", source: "# A" }],
	},
	{ method: "GET", path: "/api/documents/:document" },
	{ method: "PUT", path: "/api/documents/:document/source", examples: [{ source: "# B", revision: 1 }] },
	{ method: "GET", path: "/api/documents/:document/messages" },
	{ method: "POST", path: "/api/documents/:document/messages", examples: [{ body: "Hello there" }] },
	{ method: "GET", path: "/api/documents/:document/decisions" },
	{
		method: "POST",
		path: "/api/documents/:document/decisions",
		schema: questionSchema,
		examples: Object.values(questions).map((input) => ({ input })),
	},
	{
		method: "POST",
		path: "/api/decisions/:decision/answer",
		examples: [{ answer: { kind: "choice", choice: "A small pilot" } }],
	},
	{ method: "POST", path: "/api/decisions/:decision/cancel", examples: [{}, { questionIndex: 0 }] },
	{ method: "GET", path: "/api/documents/:document/runs" },
	{ method: "GET", path: "/api/documents/:document/planner" },
	{ method: "POST", path: "/api/documents/:document/planner/stop", examples: [{}] },
	{ method: "POST", path: "/api/documents/:document/builds", schema: startBuildSchema },
	{ method: "GET", path: "/api/documents/:document/builds" },
	{ method: "GET", path: "/api/repositories" },
];
// The answer route's schema is the member answer inside { answer }.
const answerBodies = arbitraryFor(memberAnswerSchema, { plant }).map((answer) => ({ answer }));

const headerText = fc.oneof(fc.stringMatching(/^[\x20-\x7e]{0,80}$/), plant);
const pathId = fc.oneof(
	{ arbitrary: fc.constant(undefined), weight: 3 },
	{ arbitrary: fc.oneof(strangeStrings, plant, fc.string({ maxLength: 40 })), weight: 1 },
);

/** A route's bodies: generated from its schema, mutations of its examples, or junk of any kind. */
function bodiesFor(route: Route): fc.Arbitrary<unknown> {
	const choices: fc.Arbitrary<unknown>[] = [junkValues(plant), fc.constant(BROKEN_JSON)];
	if (route.schema) choices.push(arbitraryFor(route.schema, { plant }));
	if (route.path.endsWith("/answer")) choices.push(answerBodies);
	for (const example of route.examples ?? []) choices.push(mutationsOf(example, plant));
	return fc.option(fc.oneof(...choices), { nil: undefined, freq: 10 });
}

const BROKEN_JSON = Symbol("broken JSON");
const bodies = routes.map(bodiesFor);

const cases = fc.nat({ max: routes.length - 1 }).chain((route) =>
	fc.record({
		route: fc.constant(route),
		body: bodies[route]!,
		id: pathId,
		session: fc.constantFrom("ana", "ana", "ana", "none", "stale"),
		bearer: fc.constantFrom("none", "machine", "machine", "planted", "junk"),
		client: fc.constantFrom("ok", "ok", "none", "junk"),
		junk: headerText,
		origin: fc.constantFrom("ours", "ours", "none", "foreign", "null"),
		contentType: fc.constantFrom("json", "json", "json", "none", "text/plain", "form"),
		query: fc.option(
			fc.dictionary(fc.constantFrom("repository", "limit", "before", "document", "w"), headerText),
		),
	}),
);

type CaseInput = typeof cases extends fc.Arbitrary<infer T> ? T : never;

async function send(c: CaseInput): Promise<Response> {
	const route = routes[c.route]!;
	const path = route.path.replace(/:(\w+)/g, (_, name: string) =>
		encodeURIComponent((c.id ?? ids[name] ?? name).toWellFormed()),
	);
	const url = new URL(path, server.url);
	for (const [key, value] of Object.entries(c.query ?? {})) url.searchParams.set(key, value);
	const headers = new Headers();
	const publicUrl = server.context.config.publicUrl;
	if (c.session === "ana") headers.set("cookie", jar.header());
	if (c.session === "stale") headers.set("cookie", jar.header().replace(/=([^;]{4})/g, "=0000"));
	if (c.bearer === "machine") headers.set("authorization", `Bearer ${credential}`);
	if (c.bearer === "planted") headers.set("authorization", `Bearer ${planted[c.route % planted.length]}`);
	if (c.bearer === "junk") headers.set("authorization", c.junk);
	if (c.client === "ok")
		headers.set(
			"chopin-client",
			formatClientHeader({ version: "0.2.0", os: "linux", arch: "x64", install: "npm" }),
		);
	if (c.client === "junk") headers.set("chopin-client", c.junk);
	if (c.origin === "ours") headers.set("origin", publicUrl);
	if (c.origin === "foreign") headers.set("origin", "https://evil.example");
	if (c.origin === "null") headers.set("origin", "null");
	const contentType = {
		json: "application/json",
		none: undefined,
		"text/plain": "text/plain",
		form: "application/x-www-form-urlencoded",
	}[c.contentType];
	if (contentType) headers.set("content-type", contentType);
	const value = route.method === "GET" ? undefined : c.body;
	const body =
		value === undefined
			? undefined
			: value === BROKEN_JSON
				? '{"title": "no end'
				: (JSON.stringify(value) ?? "null");
	return fetch(url, { method: route.method, headers, body, redirect: "manual" });
}

function judge(res: Response, text: string): string | undefined {
	// Accepted content (a document titled with a token, say) comes back by design; refusals and headers never.
	const headers = [...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n");
	const answer = res.status >= 400 ? `${headers}\n${text}` : headers;
	if (searchSources(planted, [{ name: "answer", text: answer }]).length)
		return "the answer echoes a planted credential";
	if (res.status >= 500 && res.status !== 503) return `answered ${res.status}`;
	if (res.status < 400) return undefined;
	if (!(res.headers.get("content-type") ?? "").includes("json")) return undefined;
	let code: unknown;
	try {
		code = (JSON.parse(text) as { code?: unknown }).code;
	} catch {
		return "a JSON error body that is not JSON";
	}
	if (typeof code !== "string" || !documentedCodes.has(code))
		return `code ${String(code)} is not in docs/errors.md`;
	return undefined;
}

test("the pairing, connector and page APIs answer hostile requests with documented codes, never 500", async () => {
	const base = await settledHeap();
	await tryCases(cases, CASES, counts, async (c) => {
		const res = await send(c);
		const text = await res.text();
		statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
		return {
			refused: res.status >= 400,
			problem: judge(res, text),
			detail: () => `${routes[c.route]!.method} ${routes[c.route]!.path} → ${text}`,
		};
	});
	const healthy = await fetch(new URL("/healthz", server.url));
	expect(healthy.status).toBe(200);
	counts.heapMiB = await expectAftermath(base, server.logs, planted);
}, 120_000);
