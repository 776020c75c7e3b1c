/** What sessions and turns need from the connection they are bound to, so they do not depend on it. */
import type { Clock } from "../clock";
import type { Feature } from "../features";
import type { ClientMessage } from "../schemas/client-messages";

export interface Wire {
	/** The features attached granted. */
	readonly features: ReadonlySet<Feature>;
	readonly clock: Clock;
	/** encodeClientMessage with the granted features: throws EncodeError for what the server would refuse. */
	encode(message: ClientMessage): string;
	/** Writes an encoded frame; throws LinkError link-closed once the link has ended. */
	sendText(text: string): void;
	/** Where errors nobody can catch go (a handler that threw after its turn ended). */
	report(error: unknown): void;
}
