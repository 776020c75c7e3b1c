// The hard exit: killLiveScopes() ends every live scope at once and synchronously, what left its group included.
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { systemClock } from "@chopin/agent-link/clock";
import { makeTempDir } from "../testing/context";
import { liveTagged, newTag, TAG_VARIABLE } from "../testing/processes";
import { chooseContainment } from "./containment";
import { killLiveScopes } from "./live-scopes";
import { launchScope, type Scope } from "./scope";

const ESCAPES = join(import.meta.dir, "..", "testing", "fixtures", "escapes.sh");
const dirs: string[] = [];
const tags: string[] = [];
const scopes: Scope[] = [];
afterEach(async () => {
	for (const tag of tags.splice(0)) for (const p of liveTagged(tag)) process.kill(p.pid, "SIGKILL");
	for (const scope of scopes.splice(0)) await scope.stop();
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function until(what: string, check: () => boolean): Promise<void> {
	for (let i = 0; i < 1000 && !check(); i++) await Bun.sleep(10);
	if (!check()) throw new Error(`gave up waiting for ${what}`);
}

const bwrap = chooseContainment({ platform: "linux", becomeSubreaper: () => false });

describe("killLiveScopes", () => {
	for (const containment of [
		{ mode: "group" as const, reason: "test" },
		...(bwrap.mode === "pid-namespace" ? [bwrap] : []),
	]) {
		test(`SIGKILLs every live scope (${containment.mode}), setsid children and SIGTERM-ignoring ones too`, async () => {
			const dir = makeTempDir();
			dirs.push(dir);
			const tag = newTag();
			tags.push(tag);
			const scope = launchScope({
				argv: [ESCAPES],
				cwd: dir,
				env: { PATH: process.env.PATH ?? "", [TAG_VARIABLE]: tag, ESCAPES_IGNORE_TERM: "1" },
				platform: "linux",
				clock: systemClock(),
				containment,
				onStdout: () => {},
			});
			scopes.push(scope);
			await until("the setsid sleep", () => liveTagged(tag).some((p) => p.command === "sleep 301"));
			await until(
				"all of them",
				() => liveTagged(tag).filter((p) => p.command.includes("while :")).length >= 2,
			);
			expect(killLiveScopes()).toBeGreaterThanOrEqual(1);
			// Synchronous: by the time it returns every process was sent SIGKILL; the kernel ends them at once.
			await until("everything gone", () => liveTagged(tag).length === 0);
			await scope.exited;
		});
	}
});
