// Interrupts counted for real: a Bun process subscribes, gets SIGINT and SIGTERM from the kernel and relayed ones as
// the npm launcher's relay hands them over, and reports how many interrupts its command saw.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";

const MODULE = join(import.meta.dir, "interrupts.ts");

/** Runs `steps` (script lines) in a process where `seen` counts the interrupts delivered; returns what it printed. */
async function scenario(steps: string): Promise<string> {
	const script = `
import { onInterrupt, relayedInterrupt } from ${JSON.stringify(MODULE)};
let seen = 0;
const stop = onInterrupt(() => seen++);
/** Sends the signal and waits until every listener has had it (ours is the last registered). */
const direct = (signal) => new Promise((resolve) => { process.once(signal, () => resolve()); process.kill(process.pid, signal); });
${steps}
stop();
console.log(seen);
`;
	const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
	const [out, err] = await Promise.all([
		new Response(child.stdout).text(),
		new Response(child.stderr).text(),
	]);
	expect({ code: await child.exited, err }).toEqual({ code: 0, err: "" });
	return out.trim();
}

describe("interrupts", () => {
	test("without a launcher, every SIGINT and SIGTERM is an interrupt", async () => {
		expect(await scenario(`await direct("SIGINT"); await direct("SIGTERM"); await direct("SIGINT");`)).toBe(
			"3",
		);
	});

	test("one signal that reaches chopin directly and through the launcher is one interrupt, in either order", async () => {
		expect(await scenario(`await direct("SIGINT"); relayedInterrupt("SIGINT");`)).toBe("1");
		expect(await scenario(`relayedInterrupt("SIGINT"); await direct("SIGINT");`)).toBe("1");
		expect(await scenario(`relayedInterrupt("SIGTERM"); await direct("SIGTERM");`)).toBe("1");
	});

	test("two Ctrl-C through the launcher are two (the second means now); relayed alone, each counts", async () => {
		expect(
			await scenario(
				`await direct("SIGINT"); relayedInterrupt("SIGINT"); relayedInterrupt("SIGINT"); await direct("SIGINT");`,
			),
		).toBe("2");
		expect(await scenario(`relayedInterrupt("SIGINT"); relayedInterrupt("SIGTERM");`)).toBe("2");
	});

	test("the relayed copy of a signal the command already had is nothing, even after it stopped listening", async () => {
		// The group's SIGTERM ends `chopin logs -f` (exit 130); the launcher's relayed copy arrives after the command
		// stopped listening. Before the fix it was taken for a new interrupt with nobody listening, and chopin killed
		// itself with SIGTERM (143).
		expect(await scenario(`await direct("SIGTERM"); stop(); relayedInterrupt("SIGTERM");`)).toBe("1");
	});

	test("a relayed interrupt with nobody listening ends the process by that signal", async () => {
		const script = `
import { relayedInterrupt } from ${JSON.stringify(MODULE)};
relayedInterrupt("SIGTERM");
await Bun.sleep(60_000);
`;
		const child = Bun.spawn([process.execPath, "-e", script], { stdout: "ignore", stderr: "ignore" });
		await child.exited;
		expect(child.signalCode).toBe("SIGTERM");
	});
});
