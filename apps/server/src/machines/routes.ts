// The machines routes: pairing (CLI and browser), the machine's own API, the control channel, and the
// browser APIs for the Machines page and machine choice. See docs/machines.md.
import {
	CLIENT_HEADER,
	MACHINE_PATH,
	type MachineInfo,
	pairingClaimSchema,
	pairingConfirmSchema,
	pairingStartSchema,
	parseClientHeader,
	plannerCredentialRequestSchema,
} from "@chopin/agent-link/machine";
import { z } from "zod";
import { requirePermission, requireUser } from "../auth/guards";
import type { AppContext } from "../context";
import { clientAddress } from "../http/client-address";
import { HttpError, notFound } from "../http/errors";
import { jsonResponse } from "../http/responses";
import type { RouteContext, Router } from "../http/router";
import { repositoryNameSchema } from "../local-accounts";
import { choicesFor } from "./choice";
import { MACHINE_SOCKET_KIND, type MachineSocketData } from "./connection";
import { serverBusy } from "./control";
import { machineNotFound } from "./errors";
import { registerPairingGrant } from "./grant";
import { getMachine } from "./machine-rows";
import {
	assignedMachine,
	type DocumentMachine,
	type MachinesPage,
	namedDocuments,
	pinsOf,
} from "./page-data";

const choiceSchema = z.strictObject({ machine: z.string().min(1).max(128).nullable() });

export function registerMachineRoutes(router: Router, ctx: AppContext): void {
	const { machines } = ctx;
	ctx.sockets.register<MachineSocketData>(MACHINE_SOCKET_KIND, machines.control.handlers());
	registerPairingGrant(ctx);

	// --- pairing -----------------------------------------------------------------------------

	router.post("/api/connector/pairings", async (c) => {
		const body = await c.json(pairingStartSchema);
		const started = await machines.pairings.start(body, address(c, ctx));
		return jsonResponse(started, { status: 201 });
	});

	router.post("/api/connector/pairings/:id/claim", async (c) => {
		const { secret } = await c.json(pairingClaimSchema);
		const client = parseClientHeader(c.req.headers.get(CLIENT_HEADER));
		return jsonResponse(await machines.pairings.claim(c.params.id!, secret, address(c, ctx), client));
	});

	router.get("/api/connector/pairings/:id", async (c) => {
		await requireUser(ctx, c.req);
		return jsonResponse({ pairing: await machines.pairings.view(c.params.id!) });
	});

	router.post("/api/connector/pairings/:id/confirm", async (c) => {
		const user = await requireUser(ctx, c.req);
		const body = await c.json(pairingConfirmSchema);
		return jsonResponse(await machines.pairings.confirm(c.params.id!, body, user, address(c, ctx)));
	});

	// --- the machine's own API (Authorization: Bearer chopin_m_…) --------------------------------

	router.get("/api/connector/machine", async ({ req }) => {
		const caller = await machines.auth.authenticate(req);
		const machine = await getMachine(ctx.store, caller.id);
		if (!machine) throw machineNotFound();
		const info: MachineInfo = {
			machine: {
				id: machine.id,
				label: machine.label,
				owner: machine.owner,
				autoRun: machine.autoRun,
				repositories: machine.repositories,
				createdAt: machine.createdAt,
			},
		};
		return jsonResponse(info);
	});

	router.delete("/api/connector/machine", async ({ req }) => {
		// A machine to be paired again may still disconnect itself.
		const caller = await machines.auth.authenticate(req, { allowReauthorize: true });
		await machines.revoke(caller.id);
		return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
	});

	router.post("/api/connector/planner", async (c) => {
		// Before anything is checked: where machines hold no Planner credentials, the route is not there.
		if (!machines.planners.enabled()) throw notFound();
		const caller = await machines.auth.authenticate(c.req);
		const { document } = await c.json(plannerCredentialRequestSchema);
		return jsonResponse(await machines.planners.issue(caller, document));
	});

	router.get("/api/connector/github-token", async ({ req }) => {
		const caller = await machines.auth.authenticate(req);
		const token = await machines.planners.githubToken(caller);
		if (!token) return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
		return jsonResponse(token);
	});

	router.get(MACHINE_PATH, (c) => machines.control.upgrade(c));

	// A disconnected machine's cheap "do you answer?" (the CLI's daemon/reach.ts): no credential, no database.
	router.get("/api/connector/ping", () => {
		if (machines.control.shedding()) throw serverBusy();
		return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
	});

	// --- for the pages (a browser session) ------------------------------------------------------

	router.get("/api/machines", async ({ req }) => {
		const user = await requireUser(ctx, req);
		const list = await machines.list(user.login);
		const page: MachinesPage = {
			machines: list,
			pins: await pinsOf(ctx.store, user.login),
			documents: await namedDocuments(ctx, user, list),
		};
		return jsonResponse(page);
	});

	router.get("/api/machines/:id", async ({ req, params }) => {
		const user = await requireUser(ctx, req);
		const machine = await machines.view(params.id!, user.login);
		if (!machine) throw machineNotFound();
		return jsonResponse({ machine });
	});

	router.delete("/api/machines/:id", async ({ req, params }) => {
		const user = await requireUser(ctx, req);
		const machine = await getMachine(ctx.store, params.id!);
		if (!machine?.claimed || machine.owner.toLowerCase() !== user.login.toLowerCase())
			throw machineNotFound();
		await machines.revoke(machine.id);
		return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
	});

	router.put("/api/repositories/:owner/:name/machine", async (c) => {
		const user = await requireUser(ctx, c.req);
		const repository = `${c.params.owner}/${c.params.name}`;
		if (!repositoryNameSchema.safeParse(repository).success) throw notFound();
		await requirePermission(ctx, user, repository, "write");
		const { machine } = await c.json(choiceSchema);
		await machines.usage.setPin(user.login, repository, machine);
		return jsonResponse({ repository, machine });
	});

	router.get("/api/documents/:id/machine", async ({ req, params }) => {
		const user = await requireUser(ctx, req);
		const document = await readableDocument(ctx, params.id!, user);
		const choices = await choicesFor(ctx.store, user.login, document.id, document.repository);
		const answer: DocumentMachine = {
			document: document.id,
			...choices,
			assigned: await assignedMachine(ctx, user.login, document.id),
		};
		return jsonResponse(answer);
	});

	router.put("/api/documents/:id/machine", async (c) => {
		const user = await requireUser(ctx, c.req);
		const document = await readableDocument(ctx, c.params.id!, user);
		await requirePermission(ctx, user, document.repository, "write");
		const { machine } = await c.json(choiceSchema);
		await machines.usage.setOverride(user.login, document.id, machine);
		return jsonResponse({ document: document.id, machine });
	});
}

/** The document, when the person can read its repository; 404 otherwise (its existence is not revealed). */
async function readableDocument(ctx: AppContext, id: string, user: Awaited<ReturnType<typeof requireUser>>) {
	const document = await ctx.domain.documents.find(id);
	if (!document) throw new HttpError(404, "not-found", "There is no such document, or it was deleted.");
	await requirePermission(ctx, user, document.repository, "read");
	return document;
}

/** The connecting address, for per-address limits: the peer's, or a trusted proxy's header's (docs/server.md). */
function address(c: RouteContext, ctx: AppContext): string {
	return clientAddress(c.req.headers, c.server?.requestIP(c.req)?.address, ctx.config.proxyTrust);
}
