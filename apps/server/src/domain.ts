// The domain services built once from the server's context: what the HTTP routes, the /ws socket and the
// agent endpoint call. Each publishes its changes to the one live hub.

import { ChatService } from "./chat/messages";
import type { AppContext } from "./context";
import { DecisionService } from "./decisions/service";
import { seedDemo } from "./documents/seed";
import { DocumentService } from "./documents/service";
import type { DomainDeps } from "./domain-deps";
import { DocumentImageService } from "./images/service";
import { LiveHub } from "./live/hub";
import { RunService } from "./runs/service";

export interface Domain {
	readonly hub: LiveHub;
	readonly documents: DocumentService;
	readonly images: DocumentImageService;
	readonly chat: ChatService;
	readonly decisions: DecisionService;
	readonly runs: RunService;
}

export function createDomain(ctx: Pick<AppContext, "store" | "clock" | "log" | "config">): Domain {
	const hub = new LiveHub({ log: ctx.log });
	const deps: DomainDeps = { store: ctx.store, clock: ctx.clock, hub, log: ctx.log };
	const images = new DocumentImageService(deps, { maxStoredImageBytes: ctx.config.maxStoredImageBytes });
	return {
		hub,
		documents: new DocumentService(deps),
		images,
		chat: new ChatService(deps, images, ctx.config.chatAttachments),
		decisions: new DecisionService(deps),
		runs: new RunService(deps),
	};
}

/** Start-up work of the domain: the demo document when DEMO is on and the store is empty. */
export async function startDomain(domain: Domain, ctx: Pick<AppContext, "config" | "log">): Promise<void> {
	const seeded = await seedDemo(domain.documents, { demo: ctx.config.demo });
	if (seeded) ctx.log.info("demo document created", { document: seeded.id, repository: seeded.repository });
}
