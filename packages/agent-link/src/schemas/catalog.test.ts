import { describe, expect, test } from "bun:test";
import { parseClientFrame } from "../parse";
import { catalog } from "../testing/examples";
import { catalogSchema, normalizeCatalog, normalizedCatalogSchema } from "./catalog";

function parseCatalog(value: unknown) {
	return parseClientFrame(JSON.stringify({ type: "capabilities", catalog: value }), {
		features: ["capability-catalog"],
	});
}

function expectRefused(value: unknown, fragment: string) {
	const result = parseCatalog(value);
	expect(result.ok).toBe(false);
	if (!result.ok) expect(result.error.message).toContain(fragment);
}

describe("capability catalog", () => {
	test("the spec's example parses; {} withdraws everything and is valid", () => {
		expect(parseCatalog(catalog).ok).toBe(true);
		expect(parseCatalog({}).ok).toBe(true);
		expect(parseCatalog({ models: {} }).ok).toBe(true);
		expect(parseCatalog({ models: { available: [] }, commands: [] }).ok).toBe(true);
	});

	test("unknown fields are kept at every level", () => {
		const odd = {
			vendor: { region: "eu" },
			models: {
				pricing: "free",
				available: [
					{ id: "m", name: "M", context: 200_000, provider: { id: "p", url: "https://p.example" } },
				],
				default: { id: "m", note: "x" },
			},
			commands: [{ name: "review", kind: "skill", args: ["a"] }],
		};
		const result = parseCatalog(odd);
		expect(result.ok).toBe(true);
		if (result.ok && result.message.type === "capabilities") expect(result.message.catalog).toEqual(odd);
	});

	test("no string is refused for its spelling or length, empty included", () => {
		const spelled = {
			models: {
				available: [
					{
						id: "x".repeat(10_000),
						name: "",
						description: "",
						thinkingLevels: ["extra high", "低", "xhigh", "High", "high", "ß-fast", "SS-fast"],
						inputTypes: ["text", "image", ""],
					},
				],
			},
			commands: [{ name: "", kind: "" }, { name: "run" }],
		};
		expect(parseCatalog(spelled).ok).toBe(true);
	});

	test("a field the spec lists may be absent: an odd entry never closes the link", () => {
		expect(parseCatalog({ models: { available: [{ name: "No id" }], default: {} } }).ok).toBe(true);
		expect(parseCatalog({ commands: [{ description: "No name or kind" }] }).ok).toBe(true);
	});

	test("only a value of the wrong type is refused, naming the field", () => {
		expectRefused(
			{ models: { available: [{ id: 3, name: "M" }] } },
			"catalog.models.available[0].id must be a string",
		);
		expectRefused({ models: { available: "m" } }, "catalog.models.available must be an array");
		expectRefused(
			{ models: { available: [{ id: "m", thinkingLevels: "high" }] } },
			"thinkingLevels must be an array",
		);
		expectRefused(
			{ models: { available: [{ id: "m", thinkingLevels: [1] }] } },
			"thinkingLevels[0] must be a string",
		);
		expectRefused({ models: { available: [{ id: "m", provider: "p" }] } }, "provider must be an object");
		expectRefused(
			{ models: { default: { id: "m", thinkingLevel: null } } },
			"catalog.models.default.thinkingLevel",
		);
		expectRefused({ commands: [{ name: "a", kind: 1 }] }, "catalog.commands[0].kind must be a string");
		expectRefused({ commands: {} }, "catalog.commands must be an array");
		expectRefused({ models: [] }, "catalog.models must be an object");
		expectRefused({ models: { available: [null] } }, "catalog.models.available[0] must be an object");
	});

	test("normalizing leaves the example as it is", () => {
		expect(normalizeCatalog(catalogSchema.parse(catalog))).toEqual({
			catalog: catalog as never,
			dropped: [],
		});
	});

	test("a model with an empty or absent id is skipped; every other model is kept, in order", () => {
		const read = catalogSchema.parse({
			models: {
				available: [
					{ id: "a", name: "A" },
					{ id: "", name: "Empty" },
					{ name: "None" },
					{ id: "b", name: "B" },
				],
			},
		});
		const { catalog: out, dropped } = normalizeCatalog(read);
		expect(out.models?.available?.map((m) => m.id)).toEqual(["a", "b"]);
		expect(dropped).toEqual([
			{ path: "models.available[1]", reason: "model-without-id" },
			{ path: "models.available[2]", reason: "model-without-id" },
		]);
	});

	test("empty thinking levels are dropped; a model left with none keeps an empty list", () => {
		const read = catalogSchema.parse({
			models: {
				available: [
					{ id: "a", name: "A", thinkingLevels: ["", "low", "", "high"], extra: true },
					{ id: "b", name: "B", thinkingLevels: [""] },
				],
			},
		});
		const { catalog: out, dropped } = normalizeCatalog(read);
		expect(out.models?.available).toEqual([
			{ id: "a", name: "A", thinkingLevels: ["low", "high"], extra: true },
			{ id: "b", name: "B", thinkingLevels: [] },
		]);
		expect(dropped.map((d) => d.path)).toEqual([
			"models.available[0].thinkingLevels[0]",
			"models.available[0].thinkingLevels[2]",
			"models.available[1].thinkingLevels[0]",
		]);
	});

	test("a default with an empty id is left out; an empty default thinkingLevel is dropped", () => {
		const noId = normalizeCatalog(
			catalogSchema.parse({ models: { available: [], default: { id: "", x: 1 } } }),
		);
		expect(noId.catalog).toEqual({ models: { available: [] } });
		expect(noId.dropped).toEqual([{ path: "models.default", reason: "default-without-id" }]);
		const noLevel = normalizeCatalog(
			catalogSchema.parse({ models: { default: { id: "m", thinkingLevel: "", x: 1 } } }),
		);
		expect(noLevel.catalog).toEqual({ models: { default: { id: "m", x: 1 } } });
		expect(noLevel.dropped).toEqual([
			{ path: "models.default.thinkingLevel", reason: "empty-default-thinking-level" },
		]);
	});

	test("duplicates, order, spelling and unknown fields are kept exactly", () => {
		const written = {
			extra: [1, 2],
			models: {
				available: [
					{ id: "m", name: "First", thinkingLevels: ["high", "high", "High"] },
					{ id: "m", name: "Second" },
				],
				default: { id: "m", thinkingLevel: "High", y: null },
			},
			commands: [
				{ name: "review", kind: "skill" },
				{ name: "review", kind: "skill" },
			],
		};
		const { catalog: out, dropped } = normalizeCatalog(catalogSchema.parse(written));
		expect(out).toEqual(written);
		expect(dropped).toEqual([]);
	});

	test("the result always satisfies the normalized schema, and the input is not changed", () => {
		const written = {
			models: {
				available: [{ id: "" }, { id: "a", thinkingLevels: [""] }],
				default: { id: "a", thinkingLevel: "" },
			},
		};
		const before = structuredClone(written);
		const { catalog: out } = normalizeCatalog(catalogSchema.parse(written));
		expect(normalizedCatalogSchema.safeParse(out).success).toBe(true);
		expect(written).toEqual(before);
		expect(normalizedCatalogSchema.safeParse(written).success).toBe(false);
	});
});
