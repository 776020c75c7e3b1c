// Spec "Option previews", the upload_plan_image host tool: stored as the document's own image (the same bytes,
// the same path; over 1 MiB a smaller copy), its Markdown returned and the image shown on the turn's message; an
// error result for input over 16 MiB, a type it does not take, bytes of another type, an archived document, and
// a call after the turn ended.
import { afterEach, describe, expect, test } from "bun:test";
import { UPLOAD_PLAN_IMAGE_MAX_BYTES } from "@chopin/agent-link";
import { makeBmp, makeJpeg, makePng } from "../images/test-images";
import { AgentFixture } from "../testing/agent-fixture";
import { ToolInputError } from "./tools/registry";
import { PLAN_IMAGE_STORED_MAX_BYTES, uploadPlanImage } from "./tools/upload-plan-image";

let f: AgentFixture | undefined;
afterEach(async () => {
	await f?.close();
	f = undefined;
});

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

async function inTurn(features = "decision-option-previews") {
	f = await AgentFixture.start();
	const doc = await f.createDocument({ source: "# Plan\n\nWe pick a layout.\n" });
	await f.signIn("alice");
	const { socket } = await f.attach("alice", doc.id, { features });
	const turn = await f.chatTurn(socket, doc.id, "bob");
	let n = 0;
	const call = async (input: unknown, target = turn) => {
		const toolCallId = `call-${++n}`;
		socket.send({
			type: "host-tool-call",
			session: target.session,
			turn: target.turn,
			toolCallId,
			toolName: "upload_plan_image",
			input: typeof input === "string" ? input : JSON.stringify(input),
		});
		const result = await socket.nextOf("host-tool-result");
		expect(result).toMatchObject({ toolCallId });
		return result;
	};
	return { f, socket, turn, call, documentId: doc.id };
}

describe("upload_plan_image", () => {
	test("stores the image as the document's own, returns its path and Markdown, and shows it on the turn's message", async () => {
		const { f, call, documentId, turn } = await inTurn();
		const png = makePng(40, 30);
		const result = await call({ data: base64(png), mimeType: "image/png", alt: "Grid [layout]" });
		expect(result.isError).toBeUndefined();
		const sha = new Bun.CryptoHasher("sha256").update(png).digest("hex");
		const path = `/images/${sha}.png`;
		expect(result.output).toEqual({ path, markdown: `![Grid \\[layout\\]](${path})` });
		expect(await f.ctx.domain.images.isDocumentImage(documentId, path)).toBe(true);
		const reply = (await f.chat(documentId)).find((m) => m.replyTo === turn.message.id)!;
		expect(reply.images).toEqual([
			{ path, mediaType: "image/png", width: 40, height: 30, alt: "Grid [layout]" },
		]);
	});

	test("the same bytes uploaded twice give the same path and one stored image", async () => {
		const { f, call, documentId } = await inTurn();
		const jpeg = await makeJpeg(32, 24);
		const first = await call({ data: base64(jpeg), mimeType: "image/jpeg", alt: "One" });
		const second = await call({ data: base64(jpeg), mimeType: "image/jpeg", alt: "Two" });
		expect((second.output as { path: string }).path).toBe((first.output as { path: string }).path);
		expect(await f.ctx.domain.images.list(documentId)).toHaveLength(1);
	});

	test("an image over 1 MiB is stored as a smaller copy, and the same bytes again give that copy's path", async () => {
		const { f, call, documentId } = await inTurn();
		const big = makePng(530, 530, { noise: true });
		expect(big.length).toBeGreaterThan(PLAN_IMAGE_STORED_MAX_BYTES);
		const first = await call({ data: base64(big), mimeType: "image/png", alt: "Noise" });
		expect(first.isError).toBeUndefined();
		const [stored] = await f.ctx.domain.images.list(documentId);
		expect(stored!.size).toBeLessThanOrEqual(PLAN_IMAGE_STORED_MAX_BYTES);
		expect(stored!.ext).toBe("webp");
		expect(first.output).toEqual({ path: stored!.path, markdown: `![Noise](${stored!.path})` });
		const again = await call({ data: base64(big), mimeType: "image/png", alt: "Noise" });
		expect(again.output).toEqual(first.output);
		expect(await f.ctx.domain.images.list(documentId)).toHaveLength(1);
	});

	test("a type it does not take, bytes of another type, bad base64 or alt are error results that store nothing", async () => {
		const { f, call, documentId } = await inTurn();
		const png = base64(makePng(4, 4));
		const cases: [unknown, string][] = [
			[{ data: png, mimeType: "image/svg+xml", alt: "x" }, "Invalid input for upload_plan_image: mimeType"],
			[{ data: base64(makeBmp(4, 4)), mimeType: "image/png", alt: "x" }, "A BMP image is not accepted"],
			[{ data: png, mimeType: "image/jpeg", alt: "x" }, "The bytes are a PNG image, not the JPEG declared."],
			[{ data: base64(new TextEncoder().encode("<svg/>")), mimeType: "image/png", alt: "x" }, "are no image"],
			[{ data: "not base64!", mimeType: "image/png", alt: "x" }, "data: must be standard base64"],
			[{ data: png, mimeType: "image/png", alt: "two\nlines" }, "alt: must be one line"],
			[{ data: png, mimeType: "image/png", alt: "" }, "Invalid input for upload_plan_image: alt"],
			[{ data: png, mimeType: "image/png" }, "Invalid input for upload_plan_image: alt"],
		];
		for (const [input, error] of cases) {
			expect(await call(input)).toMatchObject({
				isError: true,
				output: { error: expect.stringContaining(error) },
			});
		}
		expect(await f.ctx.domain.images.list(documentId)).toEqual([]);
	});

	test("a call after its turn ended is an error result, and stores nothing", async () => {
		const { f, socket, call, turn, documentId } = await inTurn();
		socket.send({ type: "turn-end", session: turn.session, turn: turn.turn, status: "finished" });
		await socket.expect("destroy");
		const result = await call({ data: base64(makePng(4, 4)), mimeType: "image/png", alt: "Late" });
		expect(result).toMatchObject({ isError: true, output: { error: expect.any(String) } });
		expect(await f.ctx.domain.images.list(documentId)).toEqual([]);
	});
});

describe("upload_plan_image run in process (beyond what one 2 MiB frame can carry)", () => {
	const context = (fixture: AgentFixture, documentId: string) => ({
		documentId,
		repository: fixture.cast.repository,
		publicUrl: fixture.publicUrl,
		domain: fixture.ctx.domain,
		signal: new AbortController().signal,
	});

	test("data over 16 MiB decoded is invalid input", () => {
		const over = Buffer.alloc(UPLOAD_PLAN_IMAGE_MAX_BYTES + 1).toString("base64");
		expect(() => uploadPlanImage.parse({ data: over, mimeType: "image/png", alt: "Big" })).toThrow(
			new ToolInputError(`data: must decode to at most ${UPLOAD_PLAN_IMAGE_MAX_BYTES} bytes`),
		);
		const at = Buffer.alloc(UPLOAD_PLAN_IMAGE_MAX_BYTES).toString("base64");
		expect(uploadPlanImage.parse({ data: at, mimeType: "image/png", alt: "Big" }).data).toBe(at);
	});

	test("an archived document takes no image", async () => {
		f = await AgentFixture.start();
		const doc = await f.createDocument();
		await f.ctx.domain.documents.archive(doc.id);
		const args = uploadPlanImage.parse({ data: base64(makePng(4, 4)), mimeType: "image/png", alt: "x" });
		await expect(uploadPlanImage.run(args, context(f, doc.id))).rejects.toMatchObject({
			code: "document-archived",
		});
		expect(await f.ctx.domain.images.list(doc.id)).toEqual([]);
	});
});
