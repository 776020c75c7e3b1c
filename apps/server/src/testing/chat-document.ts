// A Chat on a fresh document, for the tests of the chat domain and what builds on it: the services on test deps.
import { ChatService } from "../chat/messages";
import { DocumentService } from "../documents/service";
import { DocumentImageService } from "../images/service";
import type { Store } from "../store/store";
import { testDeps } from "./domain";

/** alice's document "Doc" on a/b, with the document, image and Chat services over test deps on the store. */
export async function chatOnNewDocument(store: Store) {
	const deps = testDeps(store);
	const docs = new DocumentService(deps);
	const images = new DocumentImageService(deps);
	const chat = new ChatService(deps, images);
	const doc = await docs.create({ repository: "a/b", title: "Doc", createdBy: "alice" });
	return { deps, docs, images, chat, doc };
}
