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
	| {
			ok: true;
			document: DocumentSummary;
			signInSessionId?: string;
			/** No live sign-in yet, but a restart's hold of this account waits for it (see awaitable). */
			awaitingSignIn?: true;
	  }
	| Refused;

type Refused = { ok: false; code: RefusalCode; message: string };

const refused = (code: RefusalCode, message: string): Refused => ({ ok: false, code, message });

export async function checkAttach(
	deps: AgentDeps,
	principal: AgentPrincipal,
	message: Attach,
	documentId: string | null,
	/** Whether the document holds a restart's hold of this account that may wait for its browser sign-in. */
	awaitable: (documentId: string) => boolean = () => false,
): Promise<AttachCheck> {
	if (message.version !== PROTOCOL_VERSION) {
		return refused("unsupported-version", wording.unsupportedVersion(message.version));
	}
	if (documentId === null)
		return refused("document-unavailable", wording.documentUnavailable(message.document));
	const { identity, sessions } = deps;
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
		if (!sessions.liveSignIn(principal.login) && awaitable(document.id)) {
			// After a restart the resume waits inside the window for the browser's cookie to bring it back.
			return { ok: true, document, awaitingSignIn: true };
		}
		const signIn = await checkSignIn(deps, principal.login, document.repository);
		if (!signIn.ok) return signIn;
		return { ok: true, document, signInSessionId: signIn.signInSessionId };
	} catch (error) {
		return failedCheck(deps, principal.login, error);
	}
}

/**
 * The account's live browser sign-in, admitted and with push or administration access to the repository (the
 * sign-in Chopin's repository tools act with). Asked fresh; GitHub failing is unavailable with retry.
 */
export async function checkSignIn(
	deps: AgentDeps,
	login: string,
	repository: string,
): Promise<{ ok: true; signInSessionId: string } | Refused> {
	const { identity, sessions, config } = deps;
	try {
		const live = sessions.liveSignIn(login);
		if (!live) return refused("sign-in-required", wording.signInRequired(login, config.publicUrl));
		const fresh = { fresh: true } as const;
		const admitted = await identity.admitted(live.authorization, fresh);
		if (!admitted || !permits(await identity.permission(live.authorization, repository, fresh), "write")) {
			return refused("repository-forbidden", wording.repositoryForbidden(login, repository));
		}
		return { ok: true, signInSessionId: live.sessionId };
	} catch (error) {
		return failedCheck(deps, login, error);
	}
}

function failedCheck(deps: AgentDeps, login: string, error: unknown): Refused {
	if (isIdentityError(error, "authorization-expired")) {
		return refused("sign-in-required", wording.signInRequired(login, deps.config.publicUrl));
	}
	if (!isIdentityError(error, "unavailable")) deps.log.error("attach check failed", { error });
	return refused("unavailable", wording.unavailable());
}
