// Files in Chat in a real browser (attachments): a person attaches an image and a text file in the composer, sees
// them listed before sending and removes one they did not mean; Chat shows the image as a thumbnail and the text
// file by name; the client attached through @chopin/agent-link's connectAgent receives both in its turn. When the
// current model reads no images the composer does not take one.
import { describe, expect, test } from "bun:test";
import type { Catalog } from "@chopin/agent-link";
import { type AgentLink, connectAgent } from "@chopin/agent-link/client";
import { makePng } from "../images/test-images";
import { chromiumMissing, WAIT } from "../testing/browser";
import { numberedReplies, PlannerPages } from "../testing/planner-pages";

const missing = chromiumMissing();
const ALICE_TOKEN = "alice-browser-test-token-0123456789";
const PNG = makePng(24, 16);
const NOTES = "# Notes\n\nShip on Friday.\n";

const catalog = (defaultId: string): Catalog => ({
	models: {
		available: [
			{ id: "vision", name: "Vision", inputTypes: ["text", "image"] },
			{ id: "local-7b", name: "Local 7B", inputTypes: ["text"] },
		],
		default: { id: defaultId },
	},
});

describe.skipIf(missing)("attachments", () => {
	let link: AgentLink | undefined;
	const world = PlannerPages.forSuite(ALICE_TOKEN, () => link?.detach());
	const { browsers } = world;

	test("a person attaches an image and a text file; Chat shows them and the client receives them in its turn", async () => {
		const doc = await world.createDocument();
		const { turns, answer } = numberedReplies();
		link = await connectAgent({
			url: world.api.server.publicUrl,
			token: ALICE_TOKEN,
			document: doc.id,
			resumable: false,
			features: ["attachments"],
			capabilities: catalog("vision"),
			handlers: { start: () => {}, turn: answer, stop: () => ({ ok: true }), resume: () => ({ ok: true }) },
		});

		const page = await world.openAttached("Bob (bob)", doc.id);
		const input = page.getByLabel("Attach images or text files");
		await input.waitFor({ ...WAIT, state: "attached" });
		await input.setInputFiles([
			{ name: "screenshot.png", mimeType: "image/png", buffer: Buffer.from(PNG) },
			{ name: "notes.md", mimeType: "text/markdown", buffer: Buffer.from(NOTES) },
			{ name: "draft.txt", mimeType: "text/plain", buffer: Buffer.from("not this one") },
		]);
		const picked = page.getByRole("list", { name: "Files to send" });
		await picked.getByText("draft.txt").waitFor(WAIT);
		await page.getByRole("button", { name: "Remove draft.txt" }).click();
		await picked.getByText("draft.txt").waitFor({ ...WAIT, state: "detached" });
		expect(await picked.locator("li").count()).toBe(2);

		await page.getByLabel("Message").fill("@chopin does this match?");
		await page.getByRole("button", { name: "Send" }).click();
		await page.locator('.message.planner[data-status="done"]', { hasText: "Answer 1." }).waitFor(WAIT);
		const files = turns[0]!.attachments;
		expect(files.map((a) => [a.name, a.kind, a.mediaType, a.size])).toEqual([
			["screenshot.png", "image", "image/png", PNG.length],
			["notes.md", "file", "text/plain", NOTES.length],
		]);
		expect(Buffer.from(files[0]!.data, "base64").equals(PNG)).toBe(true);
		expect(Buffer.from(files[1]!.data, "base64").toString("utf8")).toBe(NOTES);
		// The composer empties once the post's answer is read, which may come after the reply streamed over the socket.
		await picked.waitFor({ ...WAIT, state: "detached" });

		// Chat: the image as a thumbnail the browser drew, the text file by name.
		const shown = page.locator(".message.person").getByRole("list", { name: "Attached files" });
		const thumbnail = shown.getByRole("img", { name: "screenshot.png" });
		await thumbnail.waitFor(WAIT);
		await page.waitForFunction(
			() =>
				(document.querySelector<HTMLImageElement>(".attachments img.thumbnail")?.naturalWidth ?? 0) === 24,
			undefined,
			WAIT,
		);
		expect(await shown.getByRole("link", { name: "notes.md" }).getAttribute("download")).toBe("notes.md");

		// A model that reads no images: the composer offers text files only and does not take an image.
		link.reportCapabilities(catalog("local-7b"));
		const textOnly = page.getByLabel("Attach text files");
		await textOnly.waitFor({ ...WAIT, state: "attached" });
		await textOnly.setInputFiles([{ name: "photo.png", mimeType: "image/png", buffer: Buffer.from(PNG) }]);
		await page.getByText("photo.png is an image, and the current model does not read images.").waitFor(WAIT);
		expect(await page.getByRole("list", { name: "Files to send" }).count()).toBe(0);
		expect(browsers.errors).toEqual([]);
	}, 120_000);
});
