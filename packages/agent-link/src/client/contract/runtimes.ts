/**
 * Running a scenario with the client in Bun (in this process) or in a separate Node.js process
 * (the client and scenarios bundled for node with Bun.build, ws as the WebSocket class). Both
 * return the scenario's JSON result; the scripted server and the assertions stay in the test.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import * as client from "../index";
import type { Json, ScenarioTarget } from "./scenario";
import { SCENARIOS, type ScenarioName } from "./scenarios";

export type RuntimeName = "bun" | "node";
export const RUNTIMES: readonly RuntimeName[] = ["bun", "node"];

export interface Runner {
	readonly name: RuntimeName;
	run(name: ScenarioName, target: ScenarioTarget, params?: unknown): Promise<Json>;
	/** Kills any Node.js process still running (a test that failed half way). */
	stopAll(): void;
	/** Removes the bundle. */
	dispose(): void;
}

export async function makeRunner(name: RuntimeName): Promise<Runner> {
	return name === "bun" ? bunRunner() : nodeRunner();
}

function bunRunner(): Runner {
	return {
		name: "bun",
		run: (scenario, target, params = {}) => SCENARIOS[scenario]({ client, target, runtime: "bun", params }),
		stopAll() {},
		dispose() {},
	};
}

async function nodeRunner(): Promise<Runner> {
	const dir = mkdtempSync(join(tmpdir(), "agent-link-contract-"));
	const built = await Bun.build({
		entrypoints: [join(import.meta.dir, "node-entry.ts")],
		target: "node",
		outdir: dir,
	});
	if (!built.success) {
		rmSync(dir, { recursive: true, force: true });
		throw new Error(`The Node.js bundle failed: ${built.logs.map(String).join("\n")}`);
	}
	const children = new Set<Subprocess>();
	return {
		name: "node",
		async run(scenario, target, params = {}) {
			const child = Bun.spawn(["node", join(dir, "node-entry.js"), scenario], {
				stdin: "pipe",
				stdout: "pipe",
				stderr: "pipe",
			});
			children.add(child);
			child.stdin.write(JSON.stringify({ target, params }));
			await child.stdin.end();
			const [out, err, code] = await Promise.all([
				new Response(child.stdout).text(),
				new Response(child.stderr).text(),
				child.exited,
			]);
			children.delete(child);
			const line = out.trim().split("\n").pop() ?? "";
			if (code !== 0 || !line) throw new Error(`node exited with ${code}: ${err.trim() || out.trim()}`);
			return JSON.parse(line);
		},
		stopAll() {
			for (const child of children) child.kill();
			children.clear();
		},
		dispose() {
			rmSync(dir, { recursive: true, force: true });
		},
	};
}
