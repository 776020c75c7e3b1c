// What a machine's Planners act with: a Planner credential for one document (POST /api/connector/planner),
// its check for the agent endpoint, and the owner's GitHub token for the backend (GET /api/connector/github-token).
import type { Clock } from "@chopin/agent-link/clock";
import type { PlannerCredential } from "@chopin/agent-link/machine";
import { type Authorization, permits } from "../auth/authorization";
import { isIdentityError } from "../auth/errors";
import { GitHubAuthorization } from "../auth/github/authorization";
import { githubUnavailable } from "../auth/guards";
import type { Identity } from "../auth/identity";
import type { Config } from "../config";
import type { DocumentService } from "../documents/service";
import { ID_PATTERN } from "../ids";
import type { MachineAuthorizations } from "./authorizations";
import {
	documentArchived,
	documentNotFound,
	machineReauthorize,
	plannerRepositoryForbidden,
	refusalError,
} from "./errors";
import type { PlannerCredentials } from "./planner-credentials";

/** A GitHub token handed to a machine has at least this long left: the CLI renews its file 25 minutes before expiry. */
export const GITHUB_TOKEN_MIN_VALIDITY_MS = 30 * 60_000;

/** What a valid Planner credential attaches: its document, as the machine's owner, acting with the machine's authorization. */
export interface PlannerPrincipal {
	machineId: string;
	/** The machine owner's login: the account the Planner attaches as. */
	login: string;
	documentId: string;
	/** The machine's own authorization: repository tools act with it, never with a browser sign-in. */
	authorization: Authorization;
	/** When the credential stops opening connections (a connection it opened outlives it). */
	expiresAt: number;
}

export interface PlannerAccessDeps {
	clock: Pick<Clock, "now">;
	settings(): Pick<Config, "agent" | "harness" | "authMode" | "publicUrl"> & {
		localPlannerCredentials: boolean;
	};
	identity: Identity;
	documents: DocumentService;
	authorizations: MachineAuthorizations;
	credentials: PlannerCredentials;
}

export class PlannerAccess {
	constructor(private readonly deps: PlannerAccessDeps) {}

	/**
	 * Whether POST /api/connector/planner exists: HARNESS=remote with AGENT on, and not
	 * AUTH_MODE=local unless LOCAL_PLANNER_CREDENTIALS=on (docs/machines.md says why).
	 */
	enabled(): boolean {
		const s = this.deps.settings();
		return s.agent && s.harness === "remote" && (s.authMode !== "local" || s.localPlannerCredentials);
	}

	/** The document a request names, by id or by its page URL on this server. */
	documentId(reference: string): string | undefined {
		if (ID_PATTERN.test(reference)) return reference;
		let url: URL;
		try {
			url = new URL(reference);
		} catch {
			return undefined;
		}
		if (url.origin !== new URL(this.deps.settings().publicUrl).origin) return undefined;
		const id = /^\/d\/([a-z2-7]{12})\/?$/.exec(url.pathname)?.[1];
		return id;
	}

	/**
	 * A credential for the document, for a machine whose credential was checked: 404 not-found,
	 * 409 document-archived, 403 repository-forbidden (with the machine's own authorization), 401
	 * machine-reauthorize when that authorization has ended, 503 when GitHub cannot answer.
	 */
	async issue(machine: { id: string; owner: string }, reference: string): Promise<PlannerCredential> {
		const id = this.documentId(reference);
		const document = id === undefined ? undefined : await this.deps.documents.find(id);
		if (!document) throw documentNotFound();
		if (document.archived) throw documentArchived(document.id);
		const authorization = await this.#authorization(machine);
		let permission: Awaited<ReturnType<Identity["permission"]>>;
		try {
			// Asked fresh on every request (a conditional request: a 304 spends no rate limit).
			permission = await this.deps.identity.permission(authorization, document.repository, { fresh: true });
		} catch (error) {
			throw this.#mapped(error, machine.owner);
		}
		if (!permits(permission, "write")) throw plannerRepositoryForbidden(machine.owner, document.repository);
		const { token, expiresAt } = await this.deps.credentials.issue(machine.id, document.id);
		return {
			token,
			expiresAt,
			document: { id: document.id, url: `${this.deps.settings().publicUrl}/d/${document.id}` },
		};
	}

	/**
	 * The check the agent endpoint makes of a `chopin_p_` bearer: what it attaches, or null for
	 * anything that is not an unexpired credential of a usable machine.
	 */
	async verify(token: string): Promise<PlannerPrincipal | null> {
		const { authorizations } = this.deps;
		// Taken before the query: a row it read is restored from only if no change to it came since.
		const changesBefore = authorizations.changes();
		const found = await this.deps.credentials.read(token);
		if (!found?.row.machineUsable) return null;
		const { row } = found;
		let authorization: Authorization;
		try {
			authorization = await authorizations.get(
				row.machineId,
				found.authorization && { stored: found.authorization.stored, changesBefore },
			);
		} catch (error) {
			if (isIdentityError(error, "authorization-expired")) return null;
			throw error;
		}
		return {
			machineId: row.machineId,
			login: row.owner,
			documentId: row.documentId,
			authorization,
			expiresAt: row.expiresAt,
		};
	}

	/**
	 * The owner's GitHub token with at least 30 minutes left (renewed first when needed), or null
	 * when the machine holds a local authorization (204).
	 */
	async githubToken(machine: {
		id: string;
		owner: string;
	}): Promise<{ token: string; expiresAt: number } | null> {
		const authorization = await this.#authorization(machine);
		if (!(authorization instanceof GitHubAuthorization)) return null;
		try {
			const { token, expiresAt } = await authorization.token({ minValidityMs: GITHUB_TOKEN_MIN_VALIDITY_MS });
			// A token GitHub gave no expiry: the CLI asks again in 8 hours, as for an ordinary one.
			return { token, expiresAt: expiresAt ?? this.deps.clock.now() + 8 * 3_600_000 };
		} catch (error) {
			throw this.#mapped(error, machine.owner);
		}
	}

	async #authorization(machine: { id: string; owner: string }): Promise<Authorization> {
		try {
			return await this.deps.authorizations.get(machine.id);
		} catch (error) {
			throw this.#mapped(error, machine.owner);
		}
	}

	#mapped(error: unknown, owner: string): unknown {
		if (isIdentityError(error, "authorization-expired")) return refusalError(machineReauthorize(owner));
		if (isIdentityError(error, "unavailable")) return githubUnavailable(error.retryAfterMs);
		return error;
	}
}
