// The documents API: repositories a person can read, a repository's documents, and one document's
// source, archive state and deletion. Members read; writers create, edit, archive and delete.
import { z } from "zod";
import type { RepoPermission } from "../auth/authorization";
import { isIdentityError } from "../auth/errors";
import {
	githubUnavailable,
	requirePermission,
	requireUser,
	type SignedInUser,
	signInRequired,
} from "../auth/guards";
import type { AppContext } from "../context";
import { HttpError } from "../http/errors";
import { jsonResponse } from "../http/responses";
import type { Router } from "../http/router";
import { repositoryNameSchema } from "../local-accounts";
import { documentAccess, documentUrl } from "./access";

const createSchema = z.strictObject({
	repository: repositoryNameSchema,
	title: z.string().max(1000),
	source: z.string().optional(),
});

const sourceSchema = z.strictObject({
	source: z.string(),
	/** The revision the edit was made on: any other is 409 revision-conflict. */
	revision: z.int().nonnegative(),
});

/** The person's access to a repository, without refusing: "none" when they have none. */
async function permissionOf(
	ctx: AppContext,
	user: SignedInUser,
	repository: string,
): Promise<RepoPermission> {
	try {
		return await ctx.identity.permission(user.authorization, repository);
	} catch (error) {
		if (isIdentityError(error, "unavailable")) throw githubUnavailable(error.retryAfterMs);
		if (isIdentityError(error, "authorization-expired") || isIdentityError(error, "unauthorized")) {
			throw signInRequired();
		}
		throw error;
	}
}

export function registerDocumentRoutes(router: Router, ctx: AppContext): void {
	const docs = ctx.domain.documents;

	router.get("/api/repositories", async ({ req }) => {
		const user = await requireUser(ctx, req);
		// Repositories with documents, and in local mode the ones LOCAL_ACCOUNTS configures (so a
		// first document can be made); names compare without case, the first spelling wins.
		const names = new Map<string, string>();
		const add = (name: string) => {
			if (!names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
		};
		for (const name of await docs.listRepositories()) add(name);
		for (const name of Object.keys(ctx.config.localAccounts?.repositories ?? {})) add(name);
		const checked = await Promise.all(
			[...names.values()].map(async (fullName) => ({
				fullName,
				permission: await permissionOf(ctx, user, fullName),
			})),
		);
		const repositories = checked
			.filter((r) => r.permission !== "none")
			.sort((a, b) => a.fullName.localeCompare(b.fullName));
		return jsonResponse({ repositories });
	});

	router.get("/api/documents", async ({ req, url }) => {
		const user = await requireUser(ctx, req);
		const parsed = repositoryNameSchema.safeParse(url.searchParams.get("repository") ?? "");
		if (!parsed.success) {
			throw new HttpError(
				400,
				"invalid-request",
				"The query parameter repository must be owner/name.",
				undefined,
				{ field: "repository" },
			);
		}
		const permission = await requirePermission(ctx, user, parsed.data, "read");
		return jsonResponse({
			repository: parsed.data,
			permission,
			documents: await docs.listByRepository(parsed.data),
		});
	});

	router.post("/api/documents", async (c) => {
		const user = await requireUser(ctx, c.req);
		const body = await c.json(createSchema);
		await requirePermission(ctx, user, body.repository, "write");
		const document = await docs.create({ ...body, createdBy: user.login });
		return jsonResponse({ document, url: documentUrl(ctx, document.id) }, { status: 201 });
	});

	router.get("/api/documents/:id", async ({ req, params }) => {
		const { document, permission } = await documentAccess(ctx, req, params.id!, "read");
		const [view, images] = await Promise.all([docs.get(document.id), ctx.domain.images.list(document.id)]);
		return jsonResponse({
			document: view,
			permission,
			url: documentUrl(ctx, document.id),
			/** The document's own images: the only ones its Markdown shows. */
			images: images.map((i) => i.path),
		});
	});

	router.put("/api/documents/:id/source", async (c) => {
		const { user, document } = await documentAccess(ctx, c.req, c.params.id!, "write");
		const body = await c.json(sourceSchema);
		const view = await docs.updateSource(
			document.id,
			{ source: body.source, expectedRevision: body.revision },
			{ by: user.login },
		);
		return jsonResponse({ document: view });
	});

	for (const [action, archived] of [
		["archive", true],
		["unarchive", false],
	] as const) {
		router.post(`/api/documents/:id/${action}`, async ({ req, params }) => {
			const { user, document } = await documentAccess(ctx, req, params.id!, "write");
			return jsonResponse({ document: await docs.setArchived(document.id, archived, { by: user.login }) });
		});
	}

	router.delete("/api/documents/:id", async ({ req, params }) => {
		const { user, document } = await documentAccess(ctx, req, params.id!, "write");
		await docs.softDelete(document.id, { by: user.login });
		return new Response(null, { status: 204 });
	});
}
