/**
 * Contract: an own tool's result over the 2 MiB frame limit, in Bun and in Node.js. Each image
 * that does not fit, largest first and the later of equals first, is sent as a smaller copy made
 * with Bun.Image (Bun), or with data empty and tooLarge set where no copy can be made (Node, or
 * bytes that do not decode); parts after it wait for it; a result that still does not fit is not
 * sent and fails the emit.
 */
import { describe, expect, test } from "bun:test";
import { MAX_FRAME_BYTES } from "../../limits";
import type { ToolResultPart } from "../../schemas/parts";
import { CONTRACT_TIMEOUT_MS, RUNTIMES, useContract } from "./harness";
import type { ImageSpec } from "./scenario-serve";
import { attachAndStart, revoke, sendTurn, untilTurnEnd } from "./script";
import type { ScriptedConnection } from "./scripted-server";

type Log = { log: Record<string, unknown>[] };
type Block = { type: string; data: string; mimeType: string; alt?: string; tooLarge?: number };

/** The images of the turn's tool-result part, the part's frame size, and what followed it. */
async function receiveResult(connection: ScriptedConnection) {
	const messages = await untilTurnEnd(connection);
	const index = messages.findIndex((message) => message.type === "tool-result");
	const part = messages[index] as ToolResultPart;
	const images = (part.result as { content: Block[] }).content.filter((block) => block.type === "image");
	const frame = connection.frames.find(
		(f) => "message" in f && f.message.type === "part" && f.message.part === part,
	);
	return { images, bytes: frame && "bytes" in frame ? frame.bytes : 0, after: messages.slice(index + 1) };
}

for (const runtime of RUNTIMES) {
	describe(`oversized tool-result images (${runtime})`, () => {
		const contract = useContract(runtime);

		async function makeImages(image: ImageSpec) {
			const result = contract.run("serve", {});
			const connection = await attachAndStart(contract.server);
			sendTurn(connection, [{ image: { ...image, wait: false } }, { text: "after" }]);
			const received = await receiveResult(connection);
			revoke(connection);
			const turn = ((await result) as Log).log.find((entry) => entry.event === "turn");
			const [made] = (turn?.steps ?? []) as [{ imageBytes: number[] }];
			expect(received.bytes).toBeGreaterThan(0);
			expect(received.bytes).toBeLessThanOrEqual(MAX_FRAME_BYTES);
			// The text emitted while the image was being fitted follows it.
			expect(received.after.map((message) => message.type)).toEqual([
				"text-start",
				"text-delta",
				"text-end",
				"turn-end",
			]);
			return { ...received, original: made.imageBytes };
		}

		/** A smaller copy in Bun; tooLarge with the original's size in Node, where Bun.Image is absent. */
		async function expectShrunk(block: Block, originalBytes: number) {
			expect(block.alt).toBeDefined();
			if (runtime === "node") {
				expect(block).toMatchObject({ data: "", mimeType: "image/png", tooLarge: originalBytes });
				return;
			}
			expect(block.tooLarge).toBeUndefined();
			expect(block.mimeType).toBe("image/webp");
			const bytes = Buffer.from(block.data, "base64");
			expect(bytes.length).toBeLessThan(originalBytes);
			const metadata = await new Bun.Image(bytes).metadata();
			expect(metadata.format).toBe("webp");
		}

		test(
			"an image over the limit is sent smaller, or as tooLarge where no copy can be made",
			async () => {
				const { images, original } = await makeImages({ width: 1100, height: 800 });
				await expectShrunk(images[0]!, original[0]!);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"the largest image goes first, and the one that then fits is left as it is",
			async () => {
				const { images, original } = await makeImages({
					sizes: [
						[700, 500],
						[500, 400],
					],
				});
				await expectShrunk(images[0]!, original[0]!);
				expect(images[1]).toMatchObject({ mimeType: "image/png" });
				expect(Buffer.from(images[1]!.data, "base64").length).toBe(original[1]!);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"of equal images the later goes first",
			async () => {
				const { images, original } = await makeImages({
					sizes: [
						[600, 500],
						[600, 500],
					],
					same: true,
				});
				expect(Buffer.from(images[0]!.data, "base64").length).toBe(original[0]!);
				await expectShrunk(images[1]!, original[1]!);
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"bytes that do not decode are sent as tooLarge in every runtime",
			async () => {
				const { images, original } = await makeImages({ sizes: [[800, 800]], garbage: true });
				expect(images[0]).toMatchObject({ data: "", mimeType: "image/png", tooLarge: original[0]! });
			},
			CONTRACT_TIMEOUT_MS,
		);

		test(
			"a result that still does not fit is not sent, and the turn fails with the emit's error",
			async () => {
				const result = contract.run("serve", {});
				const connection = await attachAndStart(contract.server);
				sendTurn(connection, [{ hugeResult: MAX_FRAME_BYTES }]);
				const messages = await untilTurnEnd(connection);
				expect(messages.map((message) => message.type)).toEqual(["tool-call", "turn-end"]);
				expect(messages.at(-1)).toMatchObject({ status: "failed" });
				revoke(connection);
				const turn = ((await result) as Log).log.find((entry) => entry.event === "turn");
				expect(turn?.error).toMatchObject({ name: "EncodeError", code: "message-too-large" });
			},
			CONTRACT_TIMEOUT_MS,
		);
	});
}
