// The capability catalog the attached client reported last (capability-catalog): read by the package's rules,
// held with the link and gone with it, and asked which models, levels and commands it lists.
import {
	type Catalog,
	type CatalogCommand,
	type NormalizedCatalog,
	type NormalizedCatalogModel,
	normalizeCatalog,
} from "@chopin/agent-link";
import type { Logger } from "../log";

export class ReportedCatalog {
	private constructor(readonly catalog: NormalizedCatalog) {}

	/** Reads a capabilities report; what nobody could choose (an empty id or level) is left out and logged. */
	static read(catalog: Catalog, log: Logger, link: string): ReportedCatalog {
		const { catalog: normalized, dropped } = normalizeCatalog(catalog);
		for (const drop of dropped)
			log.warn("catalog entry skipped", { link, path: drop.path, reason: drop.reason });
		return new ReportedCatalog(normalized);
	}

	/** In the client's order, repeats included. */
	get models(): NormalizedCatalogModel[] {
		return this.catalog.models?.available ?? [];
	}

	get defaultModel(): { id: string; thinkingLevel?: string } | undefined {
		return this.catalog.models?.default;
	}

	get commands(): CatalogCommand[] {
		return this.catalog.commands ?? [];
	}

	/** A model listed twice is the first entry's ("a choice of its id is the first entry's"). */
	model(id: string): NormalizedCatalogModel | undefined {
		return this.models.find((m) => m.id === id);
	}

	/** The model's levels, empty when it has no reasoning control (or is not listed). */
	levels(id: string | undefined): string[] {
		return id === undefined ? [] : (this.model(id)?.thinkingLevels ?? []);
	}

	/** A command of exactly this name and kind, as the last report spelled them. */
	command(name: string, kind: string): CatalogCommand | undefined {
		return this.commands.find((c) => (c.name ?? "") === name && (c.kind ?? "") === kind);
	}
}
