// Builds and investigations over HTTP: a writer starts, stops, resumes and discards them; members list them, read
// one and its log; the start form asks which machine would run it and its checkout's HEAD. See docs/server.md.
import { briefSchema, commitSchema, runKindSchema } from "@chopin/agent-link/machine";
import { z } from "zod";
import type { AppContext } from "../context";
import { documentAccess } from "../documents/access";
import { HttpError } from "../http/errors";
import { jsonResponse } from "../http/responses";
import type { Router } from "../http/router";
import { buildNotFound } from "./errors";
import { LOG_PAGE_MAX } from "./log-lines";

/** A start's own key: the page makes one per start, so a retried request is the same start. */
export const startKeySchema = z
	.string()
	.regex(/^[A-Za-z0-9._:-]{1,128}$/, "must be 1 to 128 letters, digits and . _ : -");

export const startBuildSchema = z.strictObject({
	kind: runKindSchema,
	brief: briefSchema,
	base: commitSchema,
	key: startKeySchema.optional(),
});

function intParam(url: URL, name: string, max: number): number | undefined {
	const raw = url.searchParams.get(name);
	if (raw === null) return undefined;
	if (!/^\d{1,15}$/.test(raw) || Number(raw) > max) {
		throw new HttpError(
			400,
			"invalid-request",
			`The query parameter ${name} must be a whole number up to ${max}.`,
			undefined,
			{
				field: name,
			},
		);
	}
	return Number(raw);
}

export function registerBuildRoutes(router: Router, ctx: AppContext): void {
	const { builds } = ctx;

	/** The run and the signed-in person, when they have `need` on its document; a run they cannot read is not found. */
	const access = async (req: Request, id: string, need: "read" | "write") => {
		const found = await builds.get(id);
		if (!found) throw buildNotFound(id);
		try {
			const { user } = await documentAccess(ctx, req, found.build.documentId, need);
			return { user, build: found.build };
		} catch (error) {
			if (error instanceof HttpError && error.code === "document-not-found") throw buildNotFound(id);
			throw error;
		}
	};

	router.post("/api/documents/:id/builds", async (c) => {
		const { user, document } = await documentAccess(ctx, c.req, c.params.id!, "write");
		const body = await c.json(startBuildSchema);
		const started = await builds.start({ documentId: document.id, ...body, by: user.login });
		return jsonResponse({ build: started.build }, { status: started.created ? 201 : 200 });
	});

	router.get("/api/documents/:id/builds", async ({ req, params }) => {
		const { user, document } = await documentAccess(ctx, req, params.id!, "read");
		return jsonResponse({ builds: await builds.list(document.id, user.login) });
	});

	router.get("/api/documents/:id/builds/base", async ({ req, params }) => {
		const { user, document } = await documentAccess(ctx, req, params.id!, "read");
		return jsonResponse({
			document: document.id,
			...(await builds.base(document.id, document.repository, user.login)),
		});
	});

	router.get("/api/builds/:id", async ({ req, params }) => {
		const { user } = await access(req, params.id!, "read");
		const found = await builds.get(params.id!, user.login);
		if (!found) throw buildNotFound(params.id!);
		return jsonResponse({ build: found.view });
	});

	router.get("/api/builds/:id/log", async ({ req, params, url }) => {
		const { build } = await access(req, params.id!, "read");
		const after = intParam(url, "after", Number.MAX_SAFE_INTEGER);
		const limit = intParam(url, "limit", LOG_PAGE_MAX);
		return jsonResponse(await builds.log(build.id, { after, limit: limit === 0 ? 1 : limit }));
	});

	router.post("/api/builds/:id/stop", async ({ req, params }) => {
		const { user, build } = await access(req, params.id!, "write");
		return jsonResponse({ build: await builds.stop(build.id, user.login) });
	});

	router.post("/api/builds/:id/resume", async ({ req, params }) => {
		const { user, build } = await access(req, params.id!, "write");
		return jsonResponse({ build: await builds.resume(build.id, user.login) });
	});

	router.post("/api/builds/:id/discard", async ({ req, params }) => {
		const { user, build } = await access(req, params.id!, "write");
		await builds.discard(build.id, user.login);
		return jsonResponse({ discarded: build.id });
	});
}
