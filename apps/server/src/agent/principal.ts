// Who an agent connection acts for, and the pluggable resolvers that turn its bearer into one: GitHub or local
// account bearers here, a paired machine's chopin_p_ Planner credential from the machines domain.
import { PLANNER_CREDENTIAL_PATTERN } from "@chopin/agent-link";
import type { Authorization } from "../auth/authorization";
import { unauthorized } from "../auth/errors";
import type { Identity } from "../auth/identity";

export interface AgentPrincipal {
	/**
	 * account: a person's GitHub token (or a local account's development token); its Planner rests
	 * on that person's live browser sign-in. machine: a paired machine's Planner credential; it
	 * attaches only `documentId`, as the machine's owner, and never needs a browser sign-in.
	 */
	readonly kind: "account" | "machine";
	/** The account the Planner runs as: the bearer's, or the machine owner's. */
	readonly login: string;
	/**
	 * What acts with the presented credential. For an account it is the bearer itself (checked
	 * for admission and push access at attach); repository tools then act with the browser
	 * sign-in's authorization instead. For a machine it is the machine's own GitHub authorization,
	 * which every check and tool uses.
	 */
	readonly authorization: Authorization;
	/** machine: the one document its credential may attach. */
	readonly documentId?: string;
	/** machine: which machine, so revoking it can close its links. */
	readonly machineId?: string;
}

/**
 * Turns a bearer into a principal. Return null for a token this resolver does not handle, so the
 * next one is asked; throw IdentityError `unauthorized` (HTTP 401) for one it handles and refuses
 * (unknown, expired, its machine revoked), or `unavailable` (HTTP 503).
 */
export interface BearerResolver {
	readonly name: string;
	resolve(token: string): Promise<AgentPrincipal | null>;
}

/** The resolvers of the agent endpoint, asked in the order added, then the account resolver last. */
export class BearerResolvers {
	readonly #resolvers: BearerResolver[] = [];

	constructor(private readonly account: BearerResolver) {}

	/** Adds a resolver ahead of the account one (the machines domain adds the chopin_p_ one); returns its removal. */
	add(resolver: BearerResolver): () => void {
		this.#resolvers.push(resolver);
		return () => {
			const i = this.#resolvers.indexOf(resolver);
			if (i !== -1) this.#resolvers.splice(i, 1);
		};
	}

	async resolve(token: string): Promise<AgentPrincipal> {
		for (const resolver of this.#resolvers) {
			const principal = await resolver.resolve(token);
			if (principal) return principal;
		}
		const principal = await this.account.resolve(token);
		if (!principal) throw unauthorized("The bearer token is not accepted here.");
		return principal;
	}
}

/** A GitHub token (GitHub mode) or a local account's development token (local mode), through Identity.verifyBearer. */
export function accountResolver(identity: Identity): BearerResolver {
	return {
		name: "account",
		async resolve(token) {
			// A Planner credential no machine resolver took is unknown here: never send it to GitHub.
			if (PLANNER_CREDENTIAL_PATTERN.test(token)) {
				throw unauthorized(
					"This Planner credential is unknown or expired, or its machine was revoked.",
					"Ask the machine's connector for a fresh credential.",
				);
			}
			const { account, authorization } = await identity.verifyBearer(token);
			return { kind: "account", login: account.login, authorization };
		},
	};
}
