// A document's choice of model and thinking level (capability-catalog): its row, and what the next turn carries
// once it is checked against the catalog the client reported last (spec: Capability catalog).
import { z } from "zod";
import { dbBoolean } from "../store/codecs";
import type { Db, Store } from "../store/store";
import type { ReportedCatalog } from "./catalog";

export interface ModelChoice {
	/** The model's id exactly as the client spelled it; absent: the client's default. */
	model?: string;
	/** Its catalog name when it was chosen, so a notice can name it after it disappears. */
	modelName?: string;
	/** One of the model's levels (or the default model's), as spelled; absent: the model's own. */
	thinkingLevel?: string;
	/** Chat already recorded that a turn fell back from this choice. */
	fallbackNoted: boolean;
}

const rowSchema = z.object({
	model: z.string().nullable(),
	model_name: z.string().nullable(),
	thinking_level: z.string().nullable(),
	fallback_noted: dbBoolean,
});

export async function readChoice(db: Db, documentId: string): Promise<ModelChoice> {
	const row = await db.one(
		db.sql`SELECT model, model_name, thinking_level, fallback_noted FROM document_model_choices
			WHERE document_id = ${documentId}`,
		rowSchema,
	);
	return {
		...(row?.model != null && { model: row.model }),
		...(row?.model_name != null && { modelName: row.model_name }),
		...(row?.thinking_level != null && { thinkingLevel: row.thinking_level }),
		fallbackNoted: row?.fallback_noted ?? false,
	};
}

/** A new choice replaces the last whole; its fallback has not been recorded yet. */
export async function saveChoice(
	store: Store,
	documentId: string,
	choice: { model?: string; modelName?: string; thinkingLevel?: string; by: string; now: number },
): Promise<void> {
	await store.sql`
		INSERT INTO document_model_choices
			(document_id, model, model_name, thinking_level, fallback_noted, chosen_by, chosen_at)
		VALUES (${documentId}, ${choice.model ?? null}, ${choice.modelName ?? null},
			${choice.thinkingLevel ?? null}, 0, ${choice.by}, ${choice.now})
		ON CONFLICT (document_id) DO UPDATE SET
			model = excluded.model, model_name = excluded.model_name, thinking_level = excluded.thinking_level,
			fallback_noted = 0, chosen_by = excluded.chosen_by, chosen_at = excluded.chosen_at`;
}

export async function setFallbackNoted(store: Store, documentId: string, noted: boolean): Promise<void> {
	await store.sql`UPDATE document_model_choices SET fallback_noted = ${noted ? 1 : 0}
		WHERE document_id = ${documentId}`;
}

/** What the choice has become against the catalog: nothing lost, or the model or the level it no longer lists. */
export type ChoiceCheck = { ok: true } | { ok: false; lost: "model" | "level" };

/**
 * The model whose levels a level without a chosen model is checked against: the operator's MODEL, which takes
 * the catalog default's place, else the catalog's default.
 */
export function defaultModelId(
	catalog: ReportedCatalog,
	operatorModel: string | undefined,
): string | undefined {
	return operatorModel || catalog.defaultModel?.id;
}

export function checkChoice(
	choice: Pick<ModelChoice, "model" | "thinkingLevel">,
	catalog: ReportedCatalog,
	operatorModel: string | undefined,
): ChoiceCheck {
	if (choice.model !== undefined && !catalog.model(choice.model)) return { ok: false, lost: "model" };
	if (choice.thinkingLevel === undefined) return { ok: true };
	const levels = catalog.levels(choice.model ?? defaultModelId(catalog, operatorModel));
	return levels.includes(choice.thinkingLevel) ? { ok: true } : { ok: false, lost: "level" };
}

/** What a turn carries, and the Chat notice to record when the choice fell back. */
export interface TurnModel {
	model?: string;
	thinkingLevel?: string;
	fallback?: { lost: "model" | "level"; notice: string };
}

/**
 * The next turn's model and level. Without a catalog (none reported) the choice is not applied: the turn is
 * what it was before the feature. A model the catalog no longer lists sends neither (the client's default
 * runs); a level its model no longer lists is dropped and the model kept.
 */
export function turnModel(
	choice: ModelChoice,
	catalog: ReportedCatalog | undefined,
	operatorModel: string | undefined,
): TurnModel {
	const operator = operatorModel || undefined;
	if (!catalog) return { ...(operator && { model: operator }) };
	const check = checkChoice(choice, catalog, operator);
	const model = choice.model ?? operator;
	if (check.ok) {
		return {
			...(model && { model }),
			...(choice.thinkingLevel !== undefined && { thinkingLevel: choice.thinkingLevel }),
		};
	}
	const name = choiceName(choice, catalog);
	if (check.lost === "model") {
		return {
			...(operator && { model: operator }),
			fallback: {
				lost: "model",
				notice: `The model ${name} chosen for this document is no longer offered by the Planner's client, so chopin answered with the client's default model.`,
			},
		};
	}
	const of = choice.model === undefined ? "the default model" : name;
	return {
		...(model && { model }),
		fallback: {
			lost: "level",
			notice: `The thinking level ${choice.thinkingLevel} chosen for this document is no longer offered for ${of}, so chopin answered with the model's default level.`,
		},
	};
}

/** The saved catalog name; an older choice without one uses the current catalog's name, else the id. */
export function choiceName(
	choice: Pick<ModelChoice, "model" | "modelName">,
	catalog?: ReportedCatalog,
): string {
	if (choice.modelName) return choice.modelName;
	if (choice.model === undefined) return "";
	return catalog?.model(choice.model)?.name || choice.model;
}
