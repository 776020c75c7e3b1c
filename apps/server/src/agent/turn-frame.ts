// The turn frame a Planner session is sent (spec: Server to client, turn): the operator's MODEL or a person's
// choice, and only what the link negotiated: thinkingLevel with capability-catalog, attachments with attachments
// (else written into the prompt), message and retry with retry-turn.
import type { Feature, HostTool, ServerMessage } from "@chopin/agent-link";
import type { TurnInput } from "./attached";
import type { ReportedCatalog } from "./catalog";
import { readsImages, turnFiles } from "./turn-attachments";

export function turnFrame(
	session: string,
	turn: string,
	tools: HostTool[],
	input: TurnInput,
	features: ReadonlySet<Feature>,
	operatorModel: string | undefined,
	catalog: ReportedCatalog | undefined,
): Extract<ServerMessage, { type: "turn" }> {
	const model = input.choice ? input.choice.model : operatorModel;
	// thinkingLevel is gated: a client that did not ask for capability-catalog never gets it.
	const thinkingLevel = features.has("capability-catalog") ? input.choice?.thinkingLevel : undefined;
	const files = turnFiles(input.prompt, input.attachments ?? [], {
		feature: features.has("attachments"),
		readsImages: readsImages(catalog, model),
	});
	return {
		type: "turn",
		session,
		turn,
		prompt: files.prompt,
		...(input.instructions !== undefined && { instructions: input.instructions }),
		...(model && { model }),
		...(thinkingLevel && { thinkingLevel }),
		...(files.attachments && { attachments: files.attachments }),
		tools,
		...(input.responseFormat && { responseFormat: input.responseFormat }),
		...(input.message !== undefined &&
			features.has("retry-turn") && {
				message: input.message,
				...(input.retry && { retry: true }),
			}),
	};
}
