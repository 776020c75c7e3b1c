// Option previews on a Decision card, in a real Chromium with a real Planner: a client attached with
// decision-option-previews uploads a picture with upload_plan_image and asks a question whose options carry
// previews. The page (open before the upload) shows each preview framed as "Preview of <label>", the picture
// bounded and opening large on a click that does not choose the option, a remote or data: image as its alt text;
// the chosen option's answer carries its preview back to the client.
import { describe, expect, test } from "bun:test";
import { type AgentLink, connectAgent, type Turn } from "@chopin/agent-link/client";
import { makePng } from "../images/test-images";
import { chromiumMissing, WAIT } from "../testing/browser";
import { PlannerPages } from "../testing/planner-pages";

const missing = chromiumMissing();
const ALICE_TOKEN = "alice-previews-test-token-0123456789";

describe.skipIf(missing)("option previews on a Decision card", () => {
	let link: AgentLink | undefined;
	const world = PlannerPages.forSuite(ALICE_TOKEN, () => link?.detach());
	const { browsers } = world;

	test("previews framed under their options; a picture bounded, opened large without choosing; foreign images as alt text", async () => {
		const created = await world.api.call("alice", "POST", "/api/documents", {
			repository: "acme/app",
			title: "Layout plan",
			source: "# Layout plan\n\nWe pick a layout.\n",
		});
		expect(created.status).toBe(201);
		const doc = ((await created.json()) as { document: { id: string } }).document;

		const seen: { tools?: string[]; markdown?: string; answer?: unknown } = {};
		const answerTurn = async (turn: Turn) => {
			seen.tools = turn.tools.map((t) => t.name);
			// A tall picture: the card must hold it to a third of the screen.
			const png = makePng(200, 900);
			const upload = await turn.callHostTool("upload_plan_image", {
				data: Buffer.from(png).toString("base64"),
				mimeType: "image/png",
				alt: "Tall grid mock-up",
			});
			seen.markdown = (upload.output as { markdown: string }).markdown;
			const result = await turn.session.ask({
				method: "questionnaire",
				params: {
					questions: [
						{
							question: "Which layout?",
							header: "Layout",
							options: [
								{ label: "Grid", description: "Cards in rows", preview: seen.markdown },
								{
									label: "Remote",
									description: "Drawn elsewhere",
									preview: "![Remote chart](https://example.com/chart.png)",
								},
								{
									label: "Inline",
									description: "A data image",
									preview: "![Inline dot](data:image/png;base64,iVBORw0KGgo=)",
								},
								{ label: "Table", description: "Plain", preview: "| a | b |\n| - | - |\n| 1 | 2 |" },
							],
						},
					],
				},
			});
			seen.answer = "value" in result ? result.value : undefined;
			await turn.end("finished");
		};
		link = await connectAgent({
			url: world.api.server.publicUrl,
			token: ALICE_TOKEN,
			document: doc.id,
			resumable: false,
			features: ["decision-option-previews"],
			handlers: {
				start: () => {},
				turn: answerTurn,
				stop: () => ({ ok: true }),
				resume: () => ({ ok: true }),
			},
		});
		expect(link.features.has("decision-option-previews")).toBe(true);

		const page = await world.openAttached("Bob (bob)", doc.id);
		await page.getByLabel("Message").fill("@chopin which layout?");
		await page.getByRole("button", { name: "Send" }).click();

		const card = page.getByRole("region", { name: "Decision 1" });
		await card.getByRole("heading", { name: "Which layout?" }).waitFor(WAIT);
		expect(seen.tools).toContain("upload_plan_image");

		// The uploaded picture, in its own group under the option, loaded though it is newer than the page.
		const grid = card.getByRole("group", { name: "Preview of Grid" });
		const picture = grid.getByRole("img", { name: "Tall grid mock-up" });
		await picture.waitFor(WAIT);
		await page.waitForFunction(
			() => {
				const img = document.querySelector<HTMLImageElement>('.preview img[alt="Tall grid mock-up"]');
				return img?.complete === true && img.naturalHeight === 900;
			},
			undefined,
			WAIT,
		);
		// Held to about a third of the screen and to the option's column.
		const bounds = await picture.evaluate((img) => {
			const frame = img.closest(".preview")!.getBoundingClientRect();
			const box = img.getBoundingClientRect();
			return { height: box.height, width: box.width, frame: frame.width, screen: window.innerHeight };
		});
		expect(bounds.height).toBeGreaterThan(0);
		expect(bounds.height).toBeLessThanOrEqual(Math.ceil(bounds.screen / 3) + 1);
		expect(bounds.width).toBeLessThanOrEqual(bounds.frame);

		// The option's name stays its label and description; the preview is not part of it.
		const gridRadio = card.getByRole("radio", { name: "Grid Cards in rows", exact: true });
		expect(await gridRadio.count()).toBe(1);

		// A click on the picture opens it large and does not choose the option.
		await grid.getByRole("link", { name: "Tall grid mock-up" }).click();
		const large = page.getByRole("dialog", { name: "Tall grid mock-up" });
		await large.waitFor(WAIT);
		const largeHeight = await large.getByRole("img").evaluate((img) => img.getBoundingClientRect().height);
		expect(largeHeight).toBeGreaterThan(bounds.height);
		expect(await gridRadio.isChecked()).toBe(false);
		await page.keyboard.press("Escape");
		await large.waitFor({ ...WAIT, state: "detached" });

		// A remote or data: image shows its alternative text, never the image.
		for (const [label, alt] of [
			["Remote", "Remote chart"],
			["Inline", "Inline dot"],
		]) {
			const group = card.getByRole("group", { name: `Preview of ${label}` });
			expect(await group.textContent()).toBe(`[${alt}]`);
			expect(await group.locator("img").count()).toBe(0);
		}
		// Other Markdown is framed too.
		const table = card.getByRole("group", { name: "Preview of Table" }).getByRole("table");
		expect(await table.getByRole("cell", { name: "2" }).count()).toBe(1);

		// Chat shows the upload as a generated image on the reply.
		await page.getByRole("region", { name: "Generated images" }).getByRole("img").first().waitFor(WAIT);

		// Choosing Grid answers with its preview.
		await gridRadio.check();
		await card.getByRole("button", { name: "Answer" }).click();
		await page.locator('[data-decision-id][data-status="answered"]').waitFor(WAIT);
		await page.locator('.message.planner[data-status="done"]').waitFor(WAIT);
		expect(seen.answer).toEqual({
			answers: [
				{
					questionIndex: 0,
					question: "Which layout?",
					kind: "option",
					answer: "Grid",
					preview: seen.markdown,
				},
			],
			cancelled: false,
		});

		// The answered card still shows the preview, and the picture still opens large.
		await grid.getByRole("link", { name: "Tall grid mock-up" }).click();
		await large.waitFor(WAIT);
		await large.getByRole("button", { name: "Close" }).click();
		await large.waitFor({ ...WAIT, state: "detached" });
		expect(browsers.errors).toEqual([]);
	}, 120_000);
});
