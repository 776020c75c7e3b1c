// The Machines page and the document's machine line in headless Chromium, with a machine connected over the real
// control channel: online with its checkouts, Planner and runs as reported; pinning; choosing a machine for a
// document; and Disconnect through its confirmation dialog, which revokes the machine (its socket closes 4410).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { MachineServerMessage } from "@chopin/agent-link/machine";
import type { Page } from "playwright-core";
import { createTestStore, type TestStore } from "../store/testing";
import { type ApiServer, createDocument, startApiServer } from "../testing/api-server";
import {
	Browsers,
	chromiumMissing,
	sidewaysOverflow,
	signInLocallyInBrowser,
	WAIT,
} from "../testing/browser";
import { connectMachine, hello, type MachineClient, pairLocally, type Target } from "../testing/machines";

const missing = chromiumMissing();

describe.skipIf(missing)("the Machines page and the document's machine, in Chromium", () => {
	let store: TestStore;
	let api: ApiServer;
	let page: Page;
	let laptop: { credential: string; machineId: string };
	let desktop: { credential: string; machineId: string };
	let client: MachineClient;
	let documentId: string;
	const browsers = new Browsers();

	beforeAll(async () => {
		store = await createTestStore("sqlite");
		api = await startApiServer(store.store);
		const target: Target = { fetch: (req) => api.server.fetch(req), publicUrl: api.server.publicUrl };
		documentId = await createDocument(api, "# Plan\n\nWhat to build.\n", "Plan");
		laptop = await pairLocally(target, api.jars.alice, {
			label: "alice's laptop",
			repositories: ["acme/app"],
			autoRun: true,
		});
		desktop = await pairLocally(target, api.jars.alice, {
			label: "alice's desktop",
			repositories: ["acme/app"],
		});
		// The laptop connects over the control channel and says it runs the document's Planner.
		client = await connectMachine(api.server.url, laptop.credential);
		client.send(
			hello(["acme/app"], {
				planners: [
					{
						document: documentId,
						state: "running",
						worktree: `/home/alice/.local/share/chopin/planners/acme/app/${documentId}`,
						checkout: "/home/ana/src/0",
						since: api.clock.now(),
						restarts: 0,
						sandbox: "bwrap",
					},
				],
			}),
		);
		const welcome = await client.next();
		if (welcome.type !== "welcome") throw new Error(`expected welcome, got ${welcome.type}`);
	});
	afterAll(async () => {
		client?.close();
		await browsers.close();
		await api?.stop();
		await store?.close();
	});

	const card = (label: string) => page.getByRole("article", { name: label });
	const documentMachine = async () =>
		(await (await api.call("alice", "GET", `/api/documents/${documentId}/machine`)).json()) as {
			override: string | null;
			pin: string | null;
			assigned: { machine: string } | null;
		};

	test("each machine: online or offline, its checkouts, the Planner it runs, and the runs it reports as they come", async () => {
		page = await browsers.open();
		await signInLocallyInBrowser(page, api.server.publicUrl, "/machines", "Alice (alice)");
		const on = card("alice's laptop");
		await on.getByText("Online", { exact: true }).waitFor(WAIT);
		expect(await on.locator(".checkouts li").allTextContents()).toEqual(["acme/app /home/ana/src/0"]);
		await on.getByText("Chopin starts them automatically").waitFor(WAIT);
		await on.getByText("chopin 0.2.0 on linux-x64, installed with npm", { exact: false }).waitFor(WAIT);
		const planner = on.locator(`.planners li[data-document="${documentId}"]`);
		expect(await planner.getAttribute("data-state")).toBe("running");
		expect(await planner.getByRole("link").textContent()).toBe("Plan (acme/app)");
		await on.getByText("No runs.").waitFor(WAIT);
		const off = card("alice's desktop");
		await off.getByText("Offline", { exact: true }).waitFor(WAIT);
		await off.getByText("Only when a person starts them").waitFor(WAIT);

		// A report arrives while the page is open: the next refresh shows it, without a reload.
		await mark(page);
		client.send({
			type: "report",
			checkouts: [{ path: "/home/ana/src/0", repository: "acme/app", branch: "main" }],
			runs: [
				{ id: "run1", status: "running", worktree: "/home/alice/.chopin/runs/run1", document: documentId },
			],
			planners: [],
			sandbox: { kind: "bwrap" },
		});
		await on.locator('.runs-list li[data-run-id="run1"][data-status="running"]').waitFor(WAIT);
		expect(await on.locator(".checkouts li").allTextContents()).toEqual(["acme/app /home/ana/src/0 on main"]);
		expect(await stillMarked(page)).toBe(true);
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("pin a machine to a repository", async () => {
		const on = card("alice's laptop");
		await on.getByLabel("Pin to a repository").selectOption("acme/app");
		await on.getByRole("button", { name: "Pin alice's laptop" }).click();
		await on.getByText("Documents of acme/app run here").waitFor(WAIT);
		expect((await documentMachine()).pin).toBe(laptop.machineId);
		// The other machine's choice says where the repository is pinned now.
		const options = await card("alice's desktop")
			.getByLabel("Pin to a repository")
			.locator("option")
			.allTextContents();
		expect(options).toEqual(["acme/app (now pinned to alice's laptop)"]);
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("the document page shows which machine runs its Planner, and choosing another sets the override", async () => {
		const request = await api.server.context.machines.requestPlanner(documentId, { by: "alice" });
		expect(request).toMatchObject({ status: "assigned", machineId: laptop.machineId, rule: "pin" });
		expect(await nextPlanners(client)).toEqual([documentId]);
		await page.goto(new URL(`/d/${documentId}`, api.server.publicUrl).href);
		const bar = page.getByRole("region", { name: "Machine" });
		await bar.getByText("alice's laptop runs this document's Planner").waitFor(WAIT);

		const chooser = bar.getByLabel("When you use it, run its Planner on");
		expect(await chooser.inputValue()).toBe("");
		expect(await chooser.locator("option").allTextContents()).toEqual([
			"Your pin for acme/app: alice's laptop",
			"alice's laptop (online)",
			"alice's desktop (offline)",
		]);
		await chooser.selectOption({ label: "alice's desktop (offline)" });
		await bar.getByRole("button", { name: "Save machine" }).click();
		await bar.getByText("Saved: this document's Planner runs on alice's desktop for you.").waitFor(WAIT);
		expect(await documentMachine()).toMatchObject({
			override: desktop.machineId,
			pin: laptop.machineId,
			// The desktop is offline: the document left the laptop and waits for it.
			assigned: null,
		});
		await bar.getByText("No machine runs this document's Planner now.").waitFor(WAIT);
		await bar.getByText("alice's desktop is offline", { exact: false }).waitFor(WAIT);
		expect(await nextPlanners(client)).toEqual([]);
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("Disconnect asks first in a dialog (Escape cancels), then revokes: the socket closes 4410 and the page shows it gone", async () => {
		await page.goto(new URL("/machines", api.server.publicUrl).href);
		const disconnect = card("alice's laptop").getByRole("button", { name: "Disconnect alice's laptop" });
		await disconnect.click();
		const dialog = page.getByRole("dialog", { name: "Disconnect alice's laptop?" });
		await dialog.waitFor(WAIT);
		// Focus starts on Cancel; Escape closes the dialog and nothing happens.
		expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel");
		await page.keyboard.press("Escape");
		await dialog.waitFor({ state: "hidden", ...WAIT });
		expect(api.server.context.machines.control.isOnline(laptop.machineId)).toBe(true);

		// From the keyboard: open it again, Tab to the dialog's Disconnect, Enter.
		await disconnect.focus();
		await page.keyboard.press("Enter");
		await dialog.waitFor(WAIT);
		await page.keyboard.press("Tab");
		expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Disconnect alice's laptop");
		await page.keyboard.press("Enter");
		expect(await nextOf(client, "revoked")).toMatchObject({ code: "machine-revoked" });
		expect((await client.closed).code).toBe(4410);
		await page.getByText("alice's laptop was disconnected.", { exact: false }).waitFor(WAIT);
		await card("alice's laptop").waitFor({ state: "detached", ...WAIT });
		await card("alice's desktop").waitFor(WAIT);
		const listed = (await (await api.call("alice", "GET", "/api/machines")).json()) as {
			machines: { id: string }[];
			pins: unknown[];
		};
		expect(listed.machines.map((m) => m.id)).toEqual([desktop.machineId]);
		// The laptop's pin went with it.
		expect(listed.pins).toEqual([]);
		expect(browsers.errors).toEqual([]);
	}, 60_000);

	test("readable at phone width", async () => {
		await page.setViewportSize({ width: 375, height: 740 });
		await page.goto(new URL("/machines", api.server.publicUrl).href);
		await card("alice's desktop").waitFor(WAIT);
		expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
		await page.goto(new URL(`/d/${documentId}`, api.server.publicUrl).href);
		await page.getByRole("region", { name: "Machine" }).waitFor(WAIT);
		expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
		expect(browsers.errors).toEqual([]);
	}, 60_000);
});

/** Marks the page's window; a reload would lose the mark. */
const mark = (page: Page) => page.evaluate(() => Object.assign(window, { chopinMark: true }));
const stillMarked = (page: Page) =>
	page.evaluate(() => (window as unknown as { chopinMark?: boolean }).chopinMark === true);

/** The next message of a type, skipping others. */
async function nextOf<T extends MachineServerMessage["type"]>(
	client: MachineClient,
	type: T,
): Promise<Extract<MachineServerMessage, { type: T }>> {
	for (;;) {
		const message = await client.next();
		if (message.type === type) return message as Extract<MachineServerMessage, { type: T }>;
	}
}

/** The next `planners` message's documents. */
async function nextPlanners(client: MachineClient): Promise<string[]> {
	return (await nextOf(client, "planners")).planners.map((p) => p.document.id);
}
