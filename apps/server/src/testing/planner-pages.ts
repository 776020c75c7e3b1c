// The world of a browser test with a Planner: a real API server on SQLite where alice's development token can
// attach a Planner client, and the test file's browsers, started and closed together.
import { afterAll, beforeAll } from "bun:test";
import type { Turn } from "@chopin/agent-link/client";
import type { Page } from "playwright-core";
import { createTestStore, type TestStore } from "../store/testing";
import { type ApiServer, startApiServer, TEST_ACCOUNTS } from "./api-server";
import { Browsers, signInLocallyInBrowser, WAIT } from "./browser";

/** A turn handler that keeps every turn and replies "Answer <n>." to the n-th. */
export function numberedReplies(): { turns: Turn[]; answer(turn: Turn): Promise<void> } {
	const turns: Turn[] = [];
	return {
		turns,
		async answer(turn) {
			turns.push(turn);
			await turn.emit({ type: "text-start", id: "r" });
			await turn.emit({ type: "text-delta", id: "r", delta: `Answer ${turns.length}.` });
			await turn.emit({ type: "text-end", id: "r" });
			await turn.end("finished");
		},
	};
}

export class PlannerPages {
	readonly browsers = new Browsers();
	#store: TestStore | undefined;
	#api: ApiServer | undefined;

	/** alice's token, for the Planner client's bearer. */
	constructor(readonly aliceToken: string) {}

	/**
	 * The world of the describe block it is called in: started before its tests and closed after them, when
	 * `detach` has let go of the clients the tests attached.
	 */
	static forSuite(aliceToken: string, detach: () => void = () => {}): PlannerPages {
		const world = new PlannerPages(aliceToken);
		beforeAll(() => world.start());
		afterAll(async () => {
			detach();
			await world.close();
		});
		return world;
	}

	/** The started server. */
	get api(): ApiServer {
		if (!this.#api) throw new Error("start() first");
		return this.#api;
	}

	/** Starts the server (call in beforeAll); resolves with it. */
	async start(): Promise<ApiServer> {
		this.#store = await createTestStore("sqlite");
		const accounts = {
			...TEST_ACCOUNTS,
			users: TEST_ACCOUNTS.users.map((u) => (u.login === "alice" ? { ...u, token: this.aliceToken } : u)),
		};
		this.#api = await startApiServer(this.#store.store, {
			env: { LOCAL_ACCOUNTS: JSON.stringify(accounts) },
		});
		return this.#api;
	}

	/** A document of acme/app alice creates through the API, titled and with a one-line plan. */
	async createDocument(title = "Launch plan"): Promise<{ id: string }> {
		if (!this.#api) throw new Error("start() first");
		const created = await this.#api.call("alice", "POST", "/api/documents", {
			repository: "acme/app",
			title,
			source: `# ${title}\n\nShip on Friday.\n`,
		});
		if (created.status !== 201) throw new Error(`creating the document answered ${created.status}`);
		return ((await created.json()) as { document: { id: string } }).document;
	}

	/** A new browser page of `account` (its sign-in button's name) on the document, live with its Planner attached. */
	async openAttached(account: string, documentId: string): Promise<Page> {
		if (!this.#api) throw new Error("start() first");
		const page = await this.browsers.open();
		await signInLocallyInBrowser(page, this.#api.server.publicUrl, `/d/${documentId}`, account);
		await page.getByText("Live", { exact: true }).waitFor(WAIT);
		await page.locator('[data-planner-state="attached"]').waitFor(WAIT);
		return page;
	}

	/** Closes the browsers, the server and its store (call in afterAll, after detaching the clients). */
	async close(): Promise<void> {
		await this.browsers.close();
		await this.#api?.stop();
		await this.#store?.close();
	}
}
