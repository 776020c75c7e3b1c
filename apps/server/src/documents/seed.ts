// The demo document a fresh local server starts with (DEMO on): one repository, one short welcome page.
import type { DocumentView } from "./document-view";
import type { DocumentService } from "./service";

export const DEMO_REPOSITORY = "demo/score";
export const DEMO_TITLE = "Welcome to Chopin";
/** The account the default LOCAL_ACCOUNTS holds (admin on demo/score). */
export const DEMO_AUTHOR = "demo";

export const DEMO_SOURCE = `# Welcome to Chopin

Chopin is a shared document your team writes with a Planner: an agent that reads the
repository, drafts with you, and asks you to decide what it cannot.

## Try it

- Edit this page: every change is a new revision.
- Write in Chat, and mention \`@chopin\` to ask the Planner.
- Answer its questions in Decisions; the Planner waits for them.

## Connect a machine

Run \`chopin connect\` in a checkout of **demo/score** to let your machine run the Planner.
`;

/**
 * Creates the demo document when demo is on and the store holds no document at all (deleted ones
 * count, so a deleted welcome page stays deleted). Returns it, or null when nothing was made.
 */
export async function seedDemo(
	docs: DocumentService,
	options: { demo: boolean },
): Promise<DocumentView | null> {
	if (!options.demo || (await docs.count()) > 0) return null;
	return docs.create({
		repository: DEMO_REPOSITORY,
		title: DEMO_TITLE,
		source: DEMO_SOURCE,
		createdBy: DEMO_AUTHOR,
	});
}
