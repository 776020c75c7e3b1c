import { describe, expect, test } from "bun:test";
import { createRedactor } from "@chopin/agent-link/redact";
import { LineSplitter, type OutputLine } from "./output-lines";

function split(chunks: (string | Uint8Array)[], maxBytes?: number, secrets: string[] = []): OutputLine[] {
	const out: OutputLine[] = [];
	const splitter = new LineSplitter({
		emit: (line) => out.push(line),
		redact: createRedactor(secrets),
		...(maxBytes ? { maxBytes } : {}),
	});
	for (const chunk of chunks) splitter.write(chunk);
	splitter.end();
	return out;
}

describe("LineSplitter", () => {
	test("joins chunks into lines and keeps a last line without a newline", () => {
		expect(split(["one\ntw", "o\r\nthr", "ee"])).toEqual([
			{ kind: "line", text: "one" },
			{ kind: "line", text: "two" },
			{ kind: "line", text: "three" },
		]);
	});

	test("masks a secret split across chunks, and token shapes", () => {
		const token = `chopin_p_${"a".repeat(43)}`;
		const out = split([`token=${token.slice(0, 20)}`, `${token.slice(20)} value=hunter22\n`], undefined, [
			"hunter22",
		]);
		expect(out).toEqual([{ kind: "line", text: "token=[redacted] value=[redacted]" }]);
	});

	test("a multi-byte character split across chunks stays whole", () => {
		const bytes = new TextEncoder().encode("é\n");
		expect(split([bytes.slice(0, 1), bytes.slice(1)])).toEqual([{ kind: "line", text: "é" }]);
	});

	test("a line over the bound is left out with its size, and the next line is kept", () => {
		const out = split(["x".repeat(10), "y".repeat(10), "\nshort\n", "z".repeat(30)], 16);
		expect(out).toEqual([
			{ kind: "dropped", bytes: 20 },
			{ kind: "line", text: "short" },
			{ kind: "dropped", bytes: 30 },
		]);
	});
});
