/**
 * The package client runs on Node.js 20 too, so the wire format must: bundle this package for
 * Node and parse, encode and normalise in a real node process.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "agent-link-node-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const script = `
import * as link from "./index.js";
const features = ["run-stage-deltas"];
const frame = link.encodeClientMessage({ type: "start-failed", session: "s1", message: "é😀" }, { features });
const results = [
	link.parseClientFrame(frame, { features }),
	link.parseClientFrame(Buffer.from(frame)),
	link.parseClientFrame(Buffer.from(frame), { isBinary: false }),
	link.parseServerFrame('{"type":"fork","session":"s","mode":"planner","from":{"session":"s0"}}'),
	link.parseClientFrame("x".repeat(link.MAX_FRAME_BYTES + 1)),
];
const catalog = link.normalizeCatalog({ models: { available: [{ id: "" }, { id: "m", thinkingLevels: ["", "high"] }] } });
console.log(JSON.stringify({ results, catalog, header: link.parseFeaturesHeader(" attachments, nope ,") }));
`;

test("the bundled package parses and encodes the same way under node", async () => {
	const built = await Bun.build({
		entrypoints: [join(import.meta.dir, "index.ts")],
		target: "node",
		outdir: dir,
	});
	expect(built.success).toBe(true);
	await Bun.write(join(dir, "check.mjs"), script);
	const child = Bun.spawn(["node", "check.mjs"], { cwd: dir, stdout: "pipe", stderr: "pipe" });
	const [out, err, code] = await Promise.all([
		new Response(child.stdout).text(),
		new Response(child.stderr).text(),
		child.exited,
	]);
	expect(err).toBe("");
	expect(code).toBe(0);
	const { results, catalog, header } = JSON.parse(out);
	expect(results.map((r: { ok: boolean; error?: { code: string } }) => r.ok || r.error?.code)).toEqual([
		true,
		"binary-frame",
		true,
		"malformed-message",
		"message-too-large",
	]);
	expect(results[0].message.message).toBe("é😀");
	expect(catalog.catalog).toEqual({ models: { available: [{ id: "m", thinkingLevels: ["high"] }] } });
	expect(header).toEqual(["attachments"]);
});
