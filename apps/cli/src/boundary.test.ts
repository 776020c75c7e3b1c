import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

function sources(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const path = join(dir, name);
		return statSync(path).isDirectory() ? sources(path) : /\.tsx?$/.test(name) ? [path] : [];
	});
}

describe("module boundaries", () => {
	const files = sources(import.meta.dir);

	test("the CLI never imports the server", () => {
		for (const file of files) {
			const text = readFileSync(file, "utf8");
			for (const match of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
				const specifier = match[1]!;
				expect({ file: relative(import.meta.dir, file), specifier }).not.toMatchObject({
					specifier: expect.stringMatching(/apps\/server|@chopin\/server/),
				});
			}
		}
	});

	test("command code reaches the process only through the context", () => {
		const commands = files.filter((file) => file.includes("/commands/") && !file.endsWith(".test.ts"));
		expect(commands.length).toBeGreaterThan(0);
		for (const file of commands) {
			const text = readFileSync(file, "utf8");
			expect({ file: relative(import.meta.dir, file), uses: /\bprocess\.|console\./.test(text) }).toEqual({
				file: relative(import.meta.dir, file),
				uses: false,
			});
		}
	});

	test("modules stay small and say what they are for", () => {
		for (const file of files) {
			const text = readFileSync(file, "utf8");
			const name = relative(import.meta.dir, file);
			if (!name.endsWith(".test.ts"))
				expect({ name, lines: text.split("\n").length < 400 }).toEqual({ name, lines: true });
			const first = text.split("\n").find((line) => line.trim() !== "" && !line.startsWith("#!"));
			if (!name.endsWith(".test.ts"))
				expect({ name, purpose: /^(\/\/|\/\*\*)/.test(first ?? "") }).toEqual({ name, purpose: true });
		}
	});
});
