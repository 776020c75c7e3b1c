import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { CliError } from "../program/errors";
import { runCli } from "../program/program";
import { eventually } from "../testing/cli-process";
import { createTestContext, type TestContext } from "../testing/context";
import { makeRepo } from "../testing/git";
import { type MachineServer, startMachineServer } from "../testing/machine-server";

let ctx: TestContext | undefined;
let machines: MachineServer | undefined;
afterEach(async () => {
	await machines?.server.close();
	machines = undefined;
	ctx?.cleanup();
	ctx = undefined;
});

/** `chopin connect --no-run` in-process on a terminal (clack), its clock driven by the test. */
async function connectOnTerminal(): Promise<{
	ctx: TestContext;
	done: Promise<unknown>;
	link: string;
	code: string;
}> {
	machines = await startMachineServer();
	ctx = createTestContext({ tty: true });
	const checkout = await makeRepo(join(ctx.root, "score"), { origin: "git@github.com:octo/score.git" });
	const c = ctx;
	const done = runCli(["connect", checkout, "--server", machines.server.url, "--no-run"], c).then(
		() => undefined,
		(error: unknown) => error,
	);
	const [, link, code] = await eventually(
		"the note with the link and code",
		() =>
			/(http:\/\/\S+\/pair\/prg_\w+)[\s\S]*Type the code ([A-Z0-9]{4}-[A-Z0-9]{4}) there/.exec(
				c.stdout.text(),
			) ?? undefined,
	);
	return { ctx: c, done, link: link!, code: code! };
}

describe("pairing on a terminal (@clack/prompts)", () => {
	test("an intro, a note with the link and code, a spinner, then Paired", async () => {
		const { ctx: c, done, link, code } = await connectOnTerminal();
		expect(c.stdout.text()).toContain(`Pair this machine with ${machines!.server.url}`);
		expect((await machines!.confirm(link.split("/pair/")[1]!, code)).status).toBe(200);
		// The CLI polls on its own clock: move it one poll interval.
		await eventually("the claim", async () => {
			await c.clock.advance(2_000);
			return existsSync(c.paths.credentialFile);
		});
		expect(await done).toBeUndefined();
		expect(c.stdout.text()).toContain(`Paired: this computer is ana's machine "test-host".`);
		expect(c.stdout.text()).toContain(`Connected to ${machines!.server.url}.`);
	}, 30_000);

	test("Ctrl-C while the spinner waits: interrupted (exit 130), the spinner says nothing was stored", async () => {
		const { ctx: c, done } = await connectOnTerminal();
		c.controller.abort(new CliError("interrupted", "Interrupted."));
		const error = await done;
		expect(error).toMatchObject({ code: "interrupted", exitCode: 130 });
		expect(c.stdout.text()).toContain("Cancelled: nothing was stored.");
		expect(existsSync(c.paths.credentialFile)).toBe(false);
		expect(existsSync(c.paths.machineConfigFile)).toBe(false);
	}, 30_000);
});
