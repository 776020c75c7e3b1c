// What the document page's composer offers from the attached client's catalog (the spec's chat:model state,
// our chat.model event), a person's choice of model and thinking level checked against it, and that choice
// resolved for the next turn with Chat's one notice when it fell back (capability-catalog).
import type { ChatModelState, ComposerModel } from "../live/events";
import type { ReportedCatalog } from "./catalog";
import type { AgentDeps } from "./deps";
import {
	checkChoice,
	choiceName,
	defaultModelId,
	type ModelChoice,
	readChoice,
	saveChoice,
	setFallbackNoted,
	type TurnModel,
	turnModel,
} from "./model-choice";

export type ChooseResult =
	| { ok: true; state: ChatModelState }
	| {
			ok: false;
			code: "model-choice-unavailable" | "model-unknown" | "thinking-level-unknown";
			message: string;
	  };

export class ComposerModels {
	/** Publishes one after another, so pages get a document's states in the order they were made. */
	#publishing: Promise<unknown> = Promise.resolve();

	constructor(
		private readonly deps: AgentDeps,
		/** The catalog of the client attached to the document now, if it reported one. */
		private readonly catalogOf: (documentId: string) => ReportedCatalog | undefined,
	) {}

	async state(documentId: string): Promise<ChatModelState> {
		const choice = await readChoice(this.deps.store, documentId);
		return composerState(choice, this.catalogOf(documentId), this.deps.config.model);
	}

	/** The catalog or the choice changed: every page of the document gets the state whole. */
	publish(documentId: string): Promise<void> {
		const done = this.#publishing.then(async () => {
			const state = await this.state(documentId);
			this.deps.domain.hub.publish(documentId, { type: "chat.model", documentId, ...state });
		});
		this.#publishing = done.catch((error: unknown) =>
			this.deps.log.error("chat.model not published", { error, document: documentId }),
		);
		return this.#publishing.then(() => {});
	}

	/** A person's choice, checked against the last catalog; null is the client's default model, or the model's level. */
	async choose(
		documentId: string,
		by: string,
		input: { model: string | null; thinkingLevel: string | null },
	): Promise<ChooseResult> {
		const catalog = this.catalogOf(documentId);
		if (!catalog) {
			return {
				ok: false,
				code: "model-choice-unavailable",
				message: "The Planner's client offers no choice of model here: it reported no catalog.",
			};
		}
		const model = input.model ?? undefined;
		const thinkingLevel = input.thinkingLevel ?? undefined;
		const check = checkChoice({ model, thinkingLevel }, catalog, this.deps.config.model);
		if (!check.ok) {
			return check.lost === "model"
				? {
						ok: false,
						code: "model-unknown",
						message: `The Planner's client does not offer the model ${model}.`,
					}
				: {
						ok: false,
						code: "thinking-level-unknown",
						message: `The thinking level ${thinkingLevel} is not one the model offers.`,
					};
		}
		const modelName = model === undefined ? undefined : catalog.model(model)?.name || undefined;
		await saveChoice(this.deps.store, documentId, {
			...(model !== undefined && { model }),
			...(modelName !== undefined && { modelName }),
			...(thinkingLevel !== undefined && { thinkingLevel }),
			by,
			now: this.deps.clock.now(),
		});
		await this.publish(documentId);
		return { ok: true, state: await this.state(documentId) };
	}

	/**
	 * The model and level the next turn carries, checked again against the catalog now. A fallback is recorded
	 * in Chat once per choice; a turn that runs with the choice again lets a later fallback be said again.
	 */
	async forTurn(documentId: string): Promise<TurnModel> {
		const { store, config, domain } = this.deps;
		const catalog = this.catalogOf(documentId);
		const choice = await readChoice(store, documentId);
		const turn = turnModel(choice, catalog, config.model);
		if (!catalog) return turn;
		if (turn.fallback && !choice.fallbackNoted) {
			await domain.chat.postNotice(documentId, turn.fallback.notice);
			await setFallbackNoted(store, documentId, true);
			await this.publish(documentId);
		} else if (!turn.fallback && choice.fallbackNoted) {
			await setFallbackNoted(store, documentId, false);
		}
		return turn;
	}
}

/** The chat.model state: the catalog as the composer shows it, and the choice with its saved name. */
export function composerState(
	choice: ModelChoice,
	catalog: ReportedCatalog | undefined,
	operatorModel: string | undefined,
): ChatModelState {
	const chosen = {
		...(choice.model !== undefined && { model: choice.model, modelName: choiceName(choice, catalog) }),
		...(choice.thinkingLevel !== undefined && { thinkingLevel: choice.thinkingLevel }),
	};
	if (!catalog) return { choice: chosen };
	const check = checkChoice(choice, catalog, operatorModel || undefined);
	const defaultId = defaultModelId(catalog, operatorModel || undefined);
	const fallback = catalog.defaultModel;
	return {
		catalog: {
			models: catalog.models.map(composerModel),
			...(defaultId && {
				default: {
					id: defaultId,
					...(catalog.model(defaultId)?.name && { name: catalog.model(defaultId)!.name }),
					// The catalog's default level goes with its default model, not with the operator's MODEL.
					...(defaultId === fallback?.id &&
						fallback.thinkingLevel !== undefined && { thinkingLevel: fallback.thinkingLevel }),
				},
			}),
			commands: catalog.commands.map((c) => ({
				name: c.name ?? "",
				...(c.description !== undefined && { description: c.description }),
				kind: c.kind ?? "",
			})),
		},
		choice: { ...chosen, ...(!check.ok && !choice.fallbackNoted && { unavailable: check.lost }) },
	};
}

function composerModel(model: ReportedCatalog["models"][number]): ComposerModel {
	const provider = model.provider?.id;
	return {
		id: model.id,
		name: model.name || model.id,
		...(provider && { provider: { id: provider, name: model.provider?.name || provider } }),
		...(model.description !== undefined && { description: model.description }),
		thinkingLevels: model.thinkingLevels ?? [],
		inputTypes: model.inputTypes ?? [],
	};
}
