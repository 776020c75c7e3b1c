// The checks attach passes (spec: Handshake and Ownership), in order: the version, the document (by id or page
// URL; not archived), the credential's document for a machine, push or admin access for the bearer, and for
// an account a live browser sign-in since the server started that is admitted and has push or admin too.
import { type Attach, PROTOCOL_VERSION, type RefusalCode } from "@chopin/agent-link";
import { permits } from "../auth/authorization";
import { isIdentityError } from "../auth/errors";
import type { DocumentSummary } from "../documents/document-view";
import type { AgentDeps } from "./deps";
import type { AgentPrincipal } from "./principal";
import { wording } from "./wording";

export type AttachCheck =
	| { ok: true; document: DocumentSummary; signInSessionId?: string }
	| { ok: false; code: RefusalCode; message: string };

const refused = (code: RefusalCode, message: string): AttachCheck => ({ ok: false, code, message });

export async function checkAttach(
	deps: AgentDeps,
	principal: AgentPrincipal,
	message: Attach,
	documentId: string | null,
): Promise<AttachCheck> {
	if (message.version !== PROTOCOL_VERSION) {
		return refused("unsupported-version", wording.unsupportedVersion(message.version));
	}
	if (documentId === null)
		return refused("document-unavailable", wording.documentUnavailable(message.document));
	const { identity, sessions, config } = deps;
	try {
		const document = await deps.domain.documents.find(documentId);
		if (!document) return refused("document-unavailable", wording.documentUnavailable(message.document));
		if (document.archived) return refused("document-archived", wording.documentArchived(document.title));
		// A machine's Planner credential attaches only the document it was issued for.
		if (principal.kind === "machine" && principal.documentId !== document.id) {
			return refused("repository-forbidden", wording.machineForbidden());
		}
		const forbidden = refused(
			"repository-forbidden",
			wording.repositoryForbidden(principal.login, document.repository),
		);
		// Asked fresh, as before every start and turn: an answer kept for seconds could let a lost access attach.
		const fresh = { fresh: true } as const;
		if (!permits(await identity.permission(principal.authorization, document.repository, fresh), "write"))
			return forbidden;
		if (principal.kind === "machine") return { ok: true, document };
		// Repository tools act with the account's browser sign-in, never with the connection's bearer.
		const live = sessions.liveSignIn(principal.login);
		if (!live) return refused("sign-in-required", wording.signInRequired(principal.login, config.publicUrl));
		const admitted = await identity.admitted(live.authorization, fresh);
		if (
			!admitted ||
			!permits(await identity.permission(live.authorization, document.repository, fresh), "write")
		) {
			return forbidden;
		}
		return { ok: true, document, signInSessionId: live.sessionId };
	} catch (error) {
		if (isIdentityError(error, "authorization-expired")) {
			return refused("sign-in-required", wording.signInRequired(principal.login, config.publicUrl));
		}
		if (!isIdentityError(error, "unavailable")) deps.log.error("attach check failed", { error });
		return refused("unavailable", wording.unavailable());
	}
}
