/**
 * The capability catalog (capability-catalog): read as written. Every object inside it keeps
 * fields nobody listed, no string is bounded or respelled, and only a value of the wrong type is
 * refused. normalizeCatalog then leaves out what nobody could choose: models and defaults
 * without an id, and empty thinking levels.
 */
import { z } from "zod";

/**
 * A field the spec lists may also be absent: "an odd entry never closes the link", so only a
 * value of the wrong type is an error. A model or default without an id is dropped by
 * normalizeCatalog, as one with an empty id is.
 */
export const catalogProviderSchema = z.looseObject({
	id: z.string().optional(),
	name: z.string().optional(),
});

export const catalogModelSchema = z.looseObject({
	id: z.string().optional(),
	name: z.string().optional(),
	provider: catalogProviderSchema.optional(),
	description: z.string().optional(),
	thinkingLevels: z.array(z.string()).optional(),
	inputTypes: z.array(z.string()).optional(),
});

export const catalogDefaultSchema = z.looseObject({
	id: z.string().optional(),
	thinkingLevel: z.string().optional(),
});

export const catalogCommandSchema = z.looseObject({
	name: z.string().optional(),
	description: z.string().optional(),
	kind: z.string().optional(),
});

export const catalogModelsSchema = z.looseObject({
	available: z.array(catalogModelSchema).optional(),
	default: catalogDefaultSchema.optional(),
});

export const catalogSchema = z.looseObject({
	models: catalogModelsSchema.optional(),
	commands: z.array(catalogCommandSchema).optional(),
});
export type Catalog = z.infer<typeof catalogSchema>;
export type CatalogModel = z.infer<typeof catalogModelSchema>;
export type CatalogCommand = z.infer<typeof catalogCommandSchema>;

/** The same catalog after normalizeCatalog: every model and default has a non-empty id and level. */
const level = z.string().min(1);
export const normalizedCatalogModelSchema = catalogModelSchema.extend({
	id: z.string().min(1),
	thinkingLevels: z.array(level).optional(),
});
export const normalizedCatalogDefaultSchema = catalogDefaultSchema.extend({
	id: z.string().min(1),
	thinkingLevel: level.optional(),
});
export const normalizedCatalogSchema = catalogSchema.extend({
	models: catalogModelsSchema
		.extend({
			available: z.array(normalizedCatalogModelSchema).optional(),
			default: normalizedCatalogDefaultSchema.optional(),
		})
		.optional(),
});
export type NormalizedCatalog = z.infer<typeof normalizedCatalogSchema>;
export type NormalizedCatalogModel = z.infer<typeof normalizedCatalogModelSchema>;

/** One thing normalizeCatalog left out, for the server's log ("skips that entry ... and logs it"). */
export interface CatalogDrop {
	path: string;
	reason: "model-without-id" | "empty-thinking-level" | "default-without-id" | "empty-default-thinking-level";
}

/**
 * Leaves out what nobody could be asked for and keeps everything else exactly: order, spelling,
 * unknown fields, repeated models and commands. The input is not changed.
 */
export function normalizeCatalog(catalog: Catalog): { catalog: NormalizedCatalog; dropped: CatalogDrop[] } {
	const dropped: CatalogDrop[] = [];
	const models = catalog.models;
	if (!models) return { catalog: catalog as NormalizedCatalog, dropped };

	const out: Record<string, unknown> = { ...models };
	if (models.available) {
		const available: NormalizedCatalogModel[] = [];
		models.available.forEach((model, i) => {
			const path = `models.available[${i}]`;
			if (!model.id) {
				dropped.push({ path, reason: "model-without-id" });
				return;
			}
			if (!model.thinkingLevels?.includes("")) {
				available.push(model as NormalizedCatalogModel);
				return;
			}
			model.thinkingLevels.forEach((entry, j) => {
				if (entry === "")
					dropped.push({ path: `${path}.thinkingLevels[${j}]`, reason: "empty-thinking-level" });
			});
			available.push({
				...model,
				id: model.id,
				thinkingLevels: model.thinkingLevels.filter((entry) => entry !== ""),
			});
		});
		out.available = available;
	}
	const fallback = models.default;
	if (fallback) {
		if (!fallback.id) {
			dropped.push({ path: "models.default", reason: "default-without-id" });
			delete out.default;
		} else if (fallback.thinkingLevel === "") {
			dropped.push({ path: "models.default.thinkingLevel", reason: "empty-default-thinking-level" });
			const { thinkingLevel: _empty, ...rest } = fallback;
			out.default = rest;
		}
	}
	return { catalog: { ...catalog, models: out } as NormalizedCatalog, dropped };
}
