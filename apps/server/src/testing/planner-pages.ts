// The world of a browser test with a Planner: a real API server on SQLite where alice's development token can
// attach a Planner client, and the test file's browsers, started and closed together.
import { createTestStore, type TestStore } from "../store/testing";
import { type ApiServer, startApiServer, TEST_ACCOUNTS } from "./api-server";
import { Browsers } from "./browser";

export class PlannerPages {
	readonly browsers = new Browsers();
	#store: TestStore | undefined;
	#api: ApiServer | undefined;

	/** alice's token, for the Planner client's bearer. */
	constructor(readonly aliceToken: string) {}

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

	/** Closes the browsers, the server and its store (call in afterAll, after detaching the clients). */
	async close(): Promise<void> {
		await this.browsers.close();
		await this.#api?.stop();
		await this.#store?.close();
	}
}
