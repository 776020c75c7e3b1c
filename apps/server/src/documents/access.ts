// Who may do what with a document: its repository's permission, with an unreadable document answered
// exactly like a missing one (404 document-not-found), so an id never reveals a private repository.

import type { RepoPermission } from "../auth/authorization";
import { requirePermission, requireUser, type SignedInUser } from "../auth/guards";
import type { AppContext } from "../context";
import { HttpError } from "../http/errors";
import type { DocumentSummary } from "./document-view";

export interface DocumentAccess {
	readonly user: SignedInUser;
	readonly document: DocumentSummary;
	readonly permission: RepoPermission;
}

export function documentNotFound(id: string): HttpError {
	return new HttpError(
		404,
		"document-not-found",
		`No document ${id.slice(0, 100)} exists, or you cannot see it.`,
	);
}

/**
 * The signed-in person and the document, when they have `need` on its repository: read makes a
 * member (read, Chat, answer Decisions), write an editor (source, archive, delete, images, questions).
 * 401 sign-in-required, 404 document-not-found (also for no access at all), 403 repository-forbidden.
 */
export async function documentAccess(
	ctx: AppContext,
	req: Request,
	id: string,
	need: "read" | "write",
): Promise<DocumentAccess> {
	const user = await requireUser(ctx, req);
	const document = await ctx.domain.documents.find(id);
	if (!document) throw documentNotFound(id);
	let permission: RepoPermission;
	try {
		permission = await requirePermission(ctx, user, document.repository, need);
	} catch (error) {
		if (error instanceof HttpError && error.code === "not-found") throw documentNotFound(id);
		throw error;
	}
	return { user, document, permission };
}

/** The document's URL people open, on PUBLIC_URL. */
export function documentUrl(ctx: AppContext, id: string): string {
	return `${ctx.config.publicUrl}/d/${id}`;
}
