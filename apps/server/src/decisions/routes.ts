// Decisions over HTTP: a document's Decisions, a question asked through the API (by people and tests),
// and members' answers and cancels. Settling goes to the service's onSettled listeners as always.
import { blockRefSchema, questionSchema } from "@chopin/agent-link";
import { z } from "zod";
import { requireUser } from "../auth/guards";
import type { AppContext } from "../context";
import { documentAccess } from "../documents/access";
import { HttpError } from "../http/errors";
import { jsonResponse } from "../http/responses";
import type { Router } from "../http/router";
import { memberAnswerSchema } from "./answers";
import type { DecisionView } from "./decision-view";

/** A question call as a person asks it: no request or session, which belong to an agent connection. */
const createSchema = z.strictObject({ input: questionSchema, block: blockRefSchema.optional() });
const answerSchema = z.strictObject({
	questionIndex: z.int().nonnegative().optional(),
	answer: memberAnswerSchema,
});
const cancelSchema = z.strictObject({ questionIndex: z.int().nonnegative().optional() });

export function registerDecisionRoutes(router: Router, ctx: AppContext): void {
	const decisions = ctx.domain.decisions;

	/** The decision when the person is a member of its document; a stranger gets the same 404 as for none. */
	const memberDecision = async (req: Request, id: string) => {
		await requireUser(ctx, req);
		const decision: DecisionView = await decisions.get(id);
		try {
			const access = await documentAccess(ctx, req, decision.documentId, "read");
			return { ...access, decision };
		} catch (error) {
			if (error instanceof HttpError && error.code === "document-not-found") throw decisionNotFound(id);
			throw error;
		}
	};

	router.get("/api/documents/:id/decisions", async ({ req, params }) => {
		const { document } = await documentAccess(ctx, req, params.id!, "read");
		return jsonResponse({ decisions: await decisions.list(document.id, { all: true }) });
	});

	router.post("/api/documents/:id/decisions", async (c) => {
		const { document } = await documentAccess(ctx, c.req, c.params.id!, "write");
		const body = await c.json(createSchema);
		return jsonResponse({ decision: await decisions.create(document.id, body) }, { status: 201 });
	});

	router.post("/api/decisions/:id/answer", async (c) => {
		const { user, decision } = await memberDecision(c.req, c.params.id!);
		const body = await c.json(answerSchema);
		const view = await decisions.answer(decision.id, { ...body, by: user.login });
		return jsonResponse({ decision: view });
	});

	router.post("/api/decisions/:id/cancel", async (c) => {
		const { user, decision } = await memberDecision(c.req, c.params.id!);
		const body = await c.json(cancelSchema);
		const view = await decisions.cancelQuestion(decision.id, { ...body, by: user.login });
		return jsonResponse({ decision: view });
	});
}

function decisionNotFound(id: string): HttpError {
	return new HttpError(
		404,
		"decision-not-found",
		`No decision ${id.slice(0, 100)} exists, or you cannot see it.`,
	);
}
