// The example is what a user's own backend would be: its shipped code uses only the package client,
// the package's schemas, zod and the runtime, never the server (its tests may start the server).
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

function sources(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const path = join(dir, name);
		return statSync(path).isDirectory() ? sources(path) : /\.tsx?$/.test(name) ? [path] : [];
	});
}

describe("planner-echo's boundaries", () => {
	const shipped = sources(import.meta.dir).filter(
		(file) => !file.endsWith(".test.ts") && !file.includes("/testing/"),
	);

	test("shipped code imports only @chopin/agent-link, zod, node: builtins and its own modules", () => {
		expect(shipped.length).toBeGreaterThan(4);
		for (const file of shipped) {
			const text = readFileSync(file, "utf8");
			for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
				const allowed = /^(\.\/[\w-]+|@chopin\/agent-link(\/[\w-]+)?|zod|node:[\w/]+)$/.test(specifier!);
				expect({ file: relative(import.meta.dir, file), specifier, allowed }).toEqual({
					file: relative(import.meta.dir, file),
					specifier,
					allowed: true,
				});
			}
		}
	});

	test("each module says what it is for in its first line", () => {
		for (const file of shipped) {
			const first = readFileSync(file, "utf8")
				.split("\n")
				.find((l) => l.trim() !== "" && !l.startsWith("#!"));
			expect({ file: relative(import.meta.dir, file), purpose: /^\/\//.test(first ?? "") }).toEqual({
				file: relative(import.meta.dir, file),
				purpose: true,
			});
		}
	});
});
