// The composer's choice of model and thinking level from the attached client's catalog (capability-catalog):
// models grouped by provider in the client's order, levels exactly as the client spelled them, and a chosen
// model that is no longer offered said until Chat records the fallback.
import { type ReactNode, useState } from "react";
import type { ChatModelState, ComposerModel } from "../../live/events";
import { api, describeError } from "../api";

type Catalog = NonNullable<ChatModelState["catalog"]>;

/** The model's groups in the order their first model appears; models without a provider stand alone. */
function groups(
	models: ComposerModel[],
): { provider?: ComposerModel["provider"]; models: ComposerModel[] }[] {
	const out: { provider?: ComposerModel["provider"]; models: ComposerModel[] }[] = [];
	const byProvider = new Map<string, ComposerModel[]>();
	for (const model of models) {
		if (!model.provider) {
			out.push({ models: [model] });
			continue;
		}
		const group = byProvider.get(model.provider.id);
		if (group) group.push(model);
		else {
			const list = [model];
			byProvider.set(model.provider.id, list);
			out.push({ provider: model.provider, models: list });
		}
	}
	return out;
}

/** The composer's own first step: "Default", or "Model default" where a level of that name exists. */
export function defaultLevelLabel(levels: readonly string[]): string {
	return levels.includes("Default") ? "Model default" : "Default";
}

export function ModelPicker(props: { documentId: string; state: ChatModelState }): ReactNode {
	const { catalog, choice } = props.state;
	const [error, setError] = useState<string | null>(null);
	const [busy, setBusy] = useState(false);
	if (!catalog || catalog.models.length === 0) return null;
	const choose = async (model: string | null, thinkingLevel: string | null) => {
		setBusy(true);
		setError(null);
		try {
			await api("PUT", `/api/documents/${props.documentId}/model`, { model, thinkingLevel });
		} catch (e) {
			setError(describeError(e));
		} finally {
			setBusy(false);
		}
	};
	const current = choice.model ?? catalog.default?.id;
	const currentModel = current === undefined ? undefined : catalog.models.find((m) => m.id === current);
	const levels = currentModel?.thinkingLevels ?? [];
	const listed = choice.model === undefined || catalog.models.some((m) => m.id === choice.model);
	const onModel = (value: string) => {
		const model = value === "" ? null : value;
		const next = catalog.models.find((m) => m.id === (model ?? catalog.default?.id));
		// A level goes with its model: kept only where the new model lists it too.
		const level =
			choice.thinkingLevel && next?.thinkingLevels.includes(choice.thinkingLevel)
				? choice.thinkingLevel
				: null;
		void choose(model, level);
	};
	return (
		<div className="model-picker">
			<label>
				Model{" "}
				<select
					aria-label="Model"
					value={choice.model ?? ""}
					disabled={busy}
					onChange={(e) => onModel(e.target.value)}
				>
					<option value="">{defaultModelLabel(catalog)}</option>
					{!listed && (
						<option value={choice.model} disabled>
							{choice.modelName ?? choice.model} (no longer available)
						</option>
					)}
					{groups(catalog.models).map((group, i) =>
						group.provider ? (
							<optgroup key={`p:${group.provider.id}`} label={group.provider.name}>
								{group.models.map((m, j) => (
									// A catalog may list the same id or level twice, and each stays listed: its position is its identity.
									// biome-ignore lint/suspicious/noArrayIndexKey: see above.
									<ModelOption key={`${m.id}:${j}`} model={m} />
								))}
							</optgroup>
						) : (
							// biome-ignore lint/suspicious/noArrayIndexKey: a model listed twice stays listed twice.
							<ModelOption key={`m:${group.models[0]!.id}:${i}`} model={group.models[0]!} />
						),
					)}
				</select>
			</label>
			{levels.length > 0 && (
				<label>
					Thinking{" "}
					<select
						aria-label="Thinking level"
						value={choice.thinkingLevel ?? ""}
						disabled={busy}
						onChange={(e) => void choose(choice.model ?? null, e.target.value === "" ? null : e.target.value)}
					>
						<option value="">{defaultLevelLabel(levels)}</option>
						{choice.thinkingLevel && !levels.includes(choice.thinkingLevel) && (
							<option value={choice.thinkingLevel} disabled>
								{choice.thinkingLevel} (no longer available)
							</option>
						)}
						{levels.map((level, i) => (
							// biome-ignore lint/suspicious/noArrayIndexKey: a level listed twice stays listed twice.
							<option key={`${level}:${i}`} value={level}>
								{level}
							</option>
						))}
					</select>
				</label>
			)}
			{choice.unavailable === "model" && (
				<p className="muted" role="status">
					{choice.modelName ?? choice.model} is no longer available: the next turn runs with the client's
					default model.
				</p>
			)}
			{choice.unavailable === "level" && (
				<p className="muted" role="status">
					The thinking level {choice.thinkingLevel} is no longer available: the next turn runs with the
					model's default level.
				</p>
			)}
			{error && (
				<p className="refusal" role="alert">
					{error}
				</p>
			)}
		</div>
	);
}

function defaultModelLabel(catalog: Catalog): string {
	const fallback = catalog.default;
	return fallback ? `Default (${fallback.name || fallback.id})` : "Default";
}

function ModelOption({ model }: { model: ComposerModel }): ReactNode {
	return (
		<option value={model.id} title={model.description}>
			{model.name}
		</option>
	);
}
