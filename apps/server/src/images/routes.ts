// A document's images over HTTP: uploads by writers, and /images/<sha256>.<ext> served only to people who
// can read a document holding the image, with its own type, nosniff and a sandbox policy.
import { z } from "zod";
import type { SignedInUser } from "../auth/guards";
import { optionalUser } from "../auth/guards";
import type { AppContext } from "../context";
import { documentAccess } from "../documents/access";
import { HttpError, notFound } from "../http/errors";
import { jsonResponse } from "../http/responses";
import type { Router } from "../http/router";
import { imageMarkdown, imageResponseHeaders, parseImagePath, type ServedImage } from "./service";

/** Alternative text: required to show an image, one line of at most 200 characters. */
const altSchema = z
	.string()
	.trim()
	.min(1)
	.max(200)
	.regex(/^[^\r\n]*$/);

export function registerImageRoutes(router: Router, ctx: AppContext): void {
	const images = ctx.domain.images;

	router.post("/api/documents/:id/images", async (c) => {
		const { document } = await documentAccess(ctx, c.req, c.params.id!, "write");
		const alt = altSchema.safeParse(c.url.searchParams.get("alt") ?? "Image");
		if (!alt.success) {
			throw new HttpError(
				400,
				"invalid-request",
				"The alt text must be one line of 1 to 200 characters.",
				undefined,
				{
					field: "alt",
				},
			);
		}
		const type = c.req.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
		const bytes = await c.bytes();
		// A declared image type must be what the bytes are; anything else (a form's octet-stream) is sniffed only.
		const stored = await images.store(document.id, bytes, {
			declaredMediaType: type?.startsWith("image/") ? type : undefined,
		});
		return jsonResponse({ ...stored, markdown: imageMarkdown(alt.data, stored.path) }, { status: 201 });
	});

	router.get("/images/:file", async ({ req, params, url }) => {
		const parsed = parseImagePath(`/images/${params.file}`);
		const user = await optionalUser(ctx, req);
		// No sign-in, no such image, or no readable document holding it: all the same 404.
		if (!parsed || !user) throw notFound();
		const width = url.searchParams.get("w");
		const canRead = (ids: readonly string[]) => canReadAny(ctx, user, ids);
		let served: ServedImage | null;
		if (width === null) served = await images.find(parsed.sha256, parsed.ext, canRead);
		else {
			if (!/^\d{1,5}$/.test(width)) {
				throw new HttpError(
					400,
					"thumbnail-width",
					`${width.slice(0, 20)} is not a thumbnail width Chat serves.`,
				);
			}
			served = await images.thumbnail(parsed.sha256, parsed.ext, Number(width), canRead);
		}
		if (!served) throw notFound();
		return new Response(new Uint8Array(served.bytes), { headers: imageResponseHeaders(served.mediaType) });
	});
}

/** Whether the person can read at least one of these documents (their repositories, each asked once). */
async function canReadAny(
	ctx: AppContext,
	user: SignedInUser,
	documentIds: readonly string[],
): Promise<boolean> {
	const repositories = new Set<string>();
	for (const id of documentIds) {
		const doc = await ctx.domain.documents.find(id);
		if (doc) repositories.add(doc.repository);
	}
	for (const repository of repositories) {
		try {
			const permission = await ctx.identity.permission(user.authorization, repository);
			if (permission !== "none") return true;
		} catch (error) {
			// An outage or an ended sign-in refuses the image like any other unreadable one.
			ctx.log.warn("image permission check failed", { repository, error });
		}
	}
	return false;
}
