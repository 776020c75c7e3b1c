// invoke_planner on /mcp: which document (a run's own; an account's must be named, and pushable by it), who asks as
// Chat shows it, and the Planner's reply (or the spec's refusal) as the tool's result.
import type { mcpToolInputs } from "@chopin/agent-link/mcp";
import type { z } from "zod";
import { documentIdOf } from "../agent/document-ref";
import { permits } from "../auth/authorization";
import { isIdentityError } from "../auth/errors";
import type { AppContext } from "../context";
import type { McpPrincipal } from "./auth";
import { refusal, type ToolResult, text } from "./results";

type Input = z.infer<z.ZodObject<(typeof mcpToolInputs)["invoke_planner"]>>;

/** The document the call is for, or the refusal. */
async function documentFor(
	ctx: AppContext,
	principal: McpPrincipal,
	reference: string | undefined,
): Promise<{ id: string } | ToolResult> {
	const named = reference === undefined ? undefined : documentIdOf(reference, ctx.config.publicUrl);
	if (principal.kind === "run") {
		const own = principal.run.build.documentId;
		if (reference !== undefined && named !== own) {
			return refusal(
				"document-forbidden",
				"A run's credential asks only its own document's Planner.",
				"Leave document out: it is the run's own.",
			);
		}
		return { id: own };
	}
	if (reference === undefined) {
		return refusal("document-required", "Name the document to ask: its id or its URL.");
	}
	const notFound = refusal("document-not-found", "No such document exists, or you cannot see it.");
	const document = named ? await ctx.domain.documents.find(named) : undefined;
	if (!document) return notFound;
	try {
		const permission = await ctx.identity.permission(principal.authorization, document.repository);
		if (permission === "none") return notFound;
		if (!permits(permission, "write")) {
			return refusal(
				"repository-forbidden",
				`${principal.login} cannot push to or administer ${document.repository}, so cannot ask this document's Planner.`,
			);
		}
	} catch (error) {
		if (isIdentityError(error, "unavailable")) {
			return refusal(
				"github-unavailable",
				"GitHub could not check your access just now.",
				"Try again in a minute.",
			);
		}
		throw error;
	}
	return { id: document.id };
}

export async function invokePlanner(
	ctx: AppContext,
	principal: McpPrincipal,
	input: Input,
	signal: AbortSignal,
): Promise<ToolResult> {
	const document = await documentFor(ctx, principal, input.document);
	if ("content" in document) return document;
	const system = input.as === "system";
	const run = principal.kind === "run" ? principal.run.build : undefined;
	const about = run ? `${run.kind} ${run.id}` : undefined;
	const asker = system
		? (about ?? `sent by @${principal.login}`)
		: `@${principal.login}'s coding agent${about ? ` (${about})` : ""}`;
	const result = await ctx.planner.invoke({
		documentId: document.id,
		by: principal.login,
		asker,
		system,
		message: input.message,
		signal,
	});
	if (result.status === "replied") return text(result.reply);
	return refusal(result.code, result.message);
}
