/**
 * connect: attach with the given options, optionally report capabilities, then detach or wait
 * for the server to close. Returns the link's attached document and features, and how it
 * closed, or the error connecting failed with.
 */
import { closedSummary, errorSummary, type Scenario, strip } from "./scenario";

export interface ConnectParams {
	features?: string[];
	resumable?: boolean;
	checkout?: { origin?: string; branch?: string; head?: string };
	/** A different bearer than the target's (for a refused upgrade). */
	token?: string;
	capabilities?: Record<string, unknown>;
	/** detach (default), or wait until the server closes. */
	until?: "detach" | "closed";
}

export const connectScenario: Scenario = async ({ client, target, WebSocket, params }) => {
	const p = params as ConnectParams;
	const token = p.token ?? target.token;
	try {
		const link = await client.connectAgent({
			url: target.url,
			token,
			document: target.document,
			checkout: p.checkout,
			features: p.features as never,
			resumable: p.resumable,
			WebSocket,
			handlers: {
				start() {},
				turn() {},
				stop: () => ({ ok: true }),
				resume: () => ({ ok: true }),
			},
		});
		if (p.capabilities) link.reportCapabilities(p.capabilities);
		const closed = await (p.until === "closed" ? link.closed : link.detach());
		return strip({ attached: link.attached, closed: closedSummary(closed) });
	} catch (error) {
		return { error: errorSummary(error, token) };
	}
};
