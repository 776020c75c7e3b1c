// The checks a Planner owner passes again before every start, every turn, every host tool call and every
// 5 minutes: the acting authorization is still there, admitted, and has push or administration access.
import type { Clock } from "@chopin/agent-link/clock";
import { type Authorization, permits } from "../auth/authorization";
import { isIdentityError } from "../auth/errors";
import type { Identity } from "../auth/identity";
import type { Sessions } from "../auth/sessions";
import type { Logger } from "../log";
import type { AgentDeps } from "./deps";
import type { AgentPrincipal } from "./principal";
import { wording } from "./wording";

const FRESH = { fresh: true } as const;

export interface AccessDeps {
	identity: Identity;
	sessions: Sessions;
	clock: Clock;
	log: Logger;
	publicUrl(): string;
}

/** The checks' deps from the agent endpoint's own (PUBLIC_URL read at use: it is final once the server listens). */
export function accessDeps(deps: AgentDeps): AccessDeps {
	return {
		identity: deps.identity,
		sessions: deps.sessions,
		clock: deps.clock,
		log: deps.log,
		publicUrl: () => deps.config.publicUrl,
	};
}

/** What the checks rest on: who attached, the browser sign-in found then (accounts), and the repository. */
export interface OwnerRef {
	principal: AgentPrincipal;
	signInSessionId?: string;
	repository: string;
}

export type AccessVerdict =
	| { ok: true; authorization: Authorization }
	/** Lost for good: the link is refused with code and closed. */
	| { ok: false; code: "sign-in-required" | "access-revoked"; message: string }
	/** GitHub could not answer: a periodic check leaves the link open; the request that asked fails. */
	| { ok: false; code: "unavailable"; message: string };

/** The authorization repository tools act with: the machine's own, or the owner's live browser sign-in. */
export function actingAuthorization(deps: AccessDeps, owner: OwnerRef): Authorization | null {
	if (owner.principal.kind === "machine") return owner.principal.authorization;
	if (!owner.signInSessionId) return null;
	const live = deps.sessions.live(owner.signInSessionId);
	if (!live || live.expiresAt <= deps.clock.now()) return null;
	return live.authorization;
}

export async function checkAccess(deps: AccessDeps, owner: OwnerRef): Promise<AccessVerdict> {
	const { principal } = owner;
	const signInEnded = () =>
		({
			ok: false,
			code: "sign-in-required",
			message: wording.signInEnded(principal.login, deps.publicUrl()),
		}) as const;
	const authorization = actingAuthorization(deps, owner);
	if (!authorization) return signInEnded();
	try {
		// Fresh: nothing kept may hide a change. An unchanged answer is a 304 that spends no rate limit. Both are
		// asked at once, so a check costs one GitHub round trip rather than two; admission decides first.
		const [admission, access] = await Promise.allSettled([
			deps.identity.admitted(authorization, FRESH),
			deps.identity.permission(authorization, owner.repository, FRESH),
		]);
		if (admission.status === "rejected") throw admission.reason;
		const admitted = admission.value;
		if (admitted && access.status === "rejected") throw access.reason;
		const permission = admitted && access.status === "fulfilled" ? access.value : "none";
		if (admitted && permits(permission, "write")) return { ok: true, authorization };
		return {
			ok: false,
			code: "access-revoked",
			message: wording.accessLost(principal.login, owner.repository),
		};
	} catch (error) {
		if (isIdentityError(error, "authorization-expired") || isIdentityError(error, "unauthorized")) {
			// The sign-in's GitHub authorization died (its session ends too); a machine's is revoked.
			return principal.kind === "account"
				? signInEnded()
				: { ok: false, code: "access-revoked", message: wording.released(principal.login) };
		}
		if (!isIdentityError(error, "unavailable")) deps.log.error("planner access check failed", { error });
		return { ok: false, code: "unavailable", message: wording.githubUnavailable() };
	}
}
