import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** The specifiers a module imports for their values when it loads: not `import type`, not import() or require(). */
function staticImports(text: string): string[] {
	return [...text.matchAll(/^(?:import|export)\s+(?!type\s)(?:[^"';]*?\sfrom\s+)?["']([^"']+)["']/gm)].map(
		(m) => m[1]!,
	);
}

function sources(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const path = join(dir, name);
		return statSync(path).isDirectory() ? sources(path) : /\.tsx?$/.test(name) ? [path] : [];
	});
}

describe("module boundaries", () => {
	const files = sources(import.meta.dir);

	/**
	 * Tests start the real server (apps/server/src/testing/server.ts) to pair against and to
	 * restart under a running daemon, so test files and the test-only helpers in src/testing/
	 * may import it; nothing the CLI ships may, and shipped code never imports src/testing/.
	 */
	const testOnly = (file: string) => file.endsWith(".test.ts") || file.includes("/src/testing/");
	const serverDir = resolve(import.meta.dir, "..", "..", "server");

	function imports(file: string): string[] {
		const text = readFileSync(file, "utf8");
		return [...text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]!);
	}

	test("the CLI never imports the server (only its tests do)", () => {
		const shipped = files.filter((file) => !testOnly(file));
		expect(shipped.length).toBeGreaterThan(10);
		for (const file of shipped) {
			for (const specifier of imports(file)) {
				const target = specifier.startsWith(".") ? resolve(dirname(file), specifier) : specifier;
				const server = target.startsWith(serverDir) || /apps\/server|@chopin\/server/.test(target);
				expect({ file: relative(import.meta.dir, file), specifier, server }).toEqual({
					file: relative(import.meta.dir, file),
					specifier,
					server: false,
				});
			}
		}
	});

	test("shipped code never imports a test helper", () => {
		for (const file of files.filter((f) => !testOnly(f))) {
			for (const specifier of imports(file)) {
				const target = specifier.startsWith(".") ? resolve(dirname(file), specifier) : specifier;
				expect({ file: relative(import.meta.dir, file), testing: target.includes("/src/testing/") }).toEqual({
					file: relative(import.meta.dir, file),
					testing: false,
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

	/**
	 * A plain `chopin status [--json]` runs without zod, commander, pino, env-paths or any Node
	 * built-in: each costs more start-up than status's own work (docs/install.md § Start-up time).
	 * It loads main.ts and, behind import(), status-by-daemon.ts and status-main.ts; everything they
	 * import statically is followed, `import type` and `require()` are not.
	 */
	test("what a plain `chopin status` loads imports no zod, commander, pino, env-paths or Node built-in", () => {
		const agentLink = resolve(import.meta.dir, "..", "..", "..", "packages", "agent-link", "src");
		const roots = ["main.ts", "status/status-by-daemon.ts", "status-main.ts"].map((f) =>
			resolve(import.meta.dir, f),
		);
		const packages = new Set<string>();
		const seen = new Set<string>();
		const pending = [...roots];
		while (pending.length > 0) {
			const file = pending.pop()!;
			if (seen.has(file)) continue;
			seen.add(file);
			for (const specifier of staticImports(readFileSync(file, "utf8"))) {
				if (specifier.startsWith(".")) {
					const target = resolve(dirname(file), specifier);
					if (!target.endsWith(".json")) pending.push(target.endsWith(".ts") ? target : `${target}.ts`);
				} else if (specifier.startsWith("@chopin/agent-link/")) {
					pending.push(join(agentLink, `${specifier.slice("@chopin/agent-link/".length)}.ts`));
				} else packages.add(specifier.replace(/^node:/, ""));
			}
		}
		expect(seen.has(resolve(import.meta.dir, "status", "status-report.ts"))).toBe(true);
		expect(seen.has(resolve(import.meta.dir, "program", "process-context.ts"))).toBe(true);
		expect(seen.has(resolve(import.meta.dir, "process-main.ts"))).toBe(false);
		expect([...packages].sort()).toEqual([]);
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
