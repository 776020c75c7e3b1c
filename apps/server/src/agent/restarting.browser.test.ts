// What a person sees of a restart's hand-over (spec: After a server restart), in a real browser on a github-mode
// server: the page comes back by itself after the restart and shows the Planner attached with a line saying Chopin
// restarted and is reconnecting; the returning client resumes (its resume waits for the owner's sign-in, which the
// browser's cookie restores) and the line goes.
import { afterAll, describe, expect, test } from "bun:test";
import { type AddressInfo, createServer } from "node:net";
import { AgentFixture } from "../testing/agent-fixture";
import { Browsers, browserCookies, chromiumMissing, WAIT } from "../testing/browser";

const missing = chromiumMissing();

/** A loopback port nothing listens on now, so PUBLIC_URL can name the server's real origin before it starts. */
async function freePort(): Promise<number> {
	const server = createServer();
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
	const { port } = server.address() as AddressInfo;
	await new Promise<void>((resolve) => server.close(() => resolve()));
	return port;
}

describe.skipIf(missing)("the Planner restarting, in the page", () => {
	const browsers = new Browsers();
	let f: AgentFixture | undefined;
	afterAll(async () => {
		await browsers.close();
		await f?.close();
	});

	test("attached with the restarting line inside the window, and without it once the client has resumed", async () => {
		const port = await freePort();
		const origin = `http://127.0.0.1:${port}`;
		f = await AgentFixture.start({ mode: "github", env: { PORT: String(port), PUBLIC_URL: origin } });
		const login = f.cast.admin;
		const doc = await f.createDocument();
		const jar = await f.signIn(login);
		const { socket } = await f.attach(login, doc.id, { features: "resumable-sessions, restart-notice" });
		const turn = await f.chatTurn(socket, doc.id, login);
		socket.send({
			type: "input-request",
			request: "q1",
			session: turn.session,
			input: { method: "confirm", title: "Ship it?", message: "" },
		});
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await f.until(async () => !!(await f!.ctx.domain.decisions.findByRequest(doc.id, "q1")), "the Decision");

		const page = await browsers.open();
		await page.context().addCookies(browserCookies(jar.header(), origin));
		await page.goto(`${origin}/d/${doc.id}`);
		await page.locator('[data-planner-state="attached"]').waitFor(WAIT);
		expect(await page.locator("[data-planner-restarting]").count()).toBe(0);

		await f.server.restart();
		// The page reconnects by itself; its requests bring the owner's sign-in back on the new process.
		const restarting = page.locator("[data-planner-restarting]");
		await restarting.waitFor(WAIT);
		expect(await restarting.textContent()).toContain(`reconnecting to @${login}'s machine`);
		await page
			.getByRole("region", { name: "Decision 1" })
			.getByRole("heading", { name: "Ship it?" })
			.waitFor(WAIT);

		const { socket: back } = await f.attach(login, doc.id, {
			features: "resumable-sessions, restart-notice",
		});
		back.send({ type: "resume", sessions: [{ session: turn.session, requests: ["q1"] }] });
		expect(await back.expect("resumed")).toEqual({
			type: "resumed",
			sessions: [{ session: turn.session, requests: ["q1"] }],
		});
		await restarting.waitFor({ state: "detached", ...WAIT });
		await page.locator('[data-planner-state="attached"]').waitFor(WAIT);
		expect(browsers.errors).toEqual([]);
	}, 120_000);
});
