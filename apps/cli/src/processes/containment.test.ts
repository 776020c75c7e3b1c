// Which containment a machine gets: the choice per platform and what works there (bwrap's probe, the subreaper),
// CHOPIN_CONTAINMENT, and the argv a PID namespace needs.
import { describe, expect, test } from "bun:test";
import { CliError } from "../program/errors";
import {
	type ContainmentOptions,
	chooseContainment,
	describeContainment,
	NAMESPACE_ARGS,
	namespacedArgv,
	withPidNamespace,
} from "./containment";

const linux = (extra: Partial<ContainmentOptions> = {}): ContainmentOptions => ({
	platform: "linux",
	which: (command) => (command === "bwrap" ? "/usr/bin/bwrap" : null),
	probeBwrap: () => true,
	becomeSubreaper: () => true,
	...extra,
});

describe("chooseContainment", () => {
	test("Linux: a PID namespace when bwrap makes one, else the subreaper, else the group", () => {
		expect(chooseContainment(linux())).toMatchObject({ mode: "pid-namespace", bwrap: "/usr/bin/bwrap" });
		expect(chooseContainment(linux({ which: () => null }))).toEqual({
			mode: "subreaper",
			reason: "bubblewrap (bwrap) is not installed; prctl(PR_SET_CHILD_SUBREAPER) worked",
		});
		expect(chooseContainment(linux({ probeBwrap: () => false, becomeSubreaper: () => false }))).toEqual({
			mode: "group",
			reason:
				"/usr/bin/bwrap could not make a PID namespace; the daemon could not become a child subreaper; process groups are what this system offers",
		});
	});

	test("macOS and Windows: the group and the tree; nothing is probed", () => {
		const never = () => {
			throw new Error("not on this platform");
		};
		const options = { which: never, probeBwrap: never, becomeSubreaper: never };
		expect(chooseContainment({ platform: "darwin", ...options }).mode).toBe("group");
		expect(chooseContainment({ platform: "win32", ...options }).mode).toBe("tree");
	});

	test("CHOPIN_CONTAINMENT asks for a mode; one that does not work here falls back and says why", () => {
		let subreaper = false;
		const asked = (value: string, extra: Partial<ContainmentOptions> = {}) =>
			chooseContainment(linux({ env: { CHOPIN_CONTAINMENT: value }, ...extra }));
		expect(asked("group")).toMatchObject({ mode: "group" });
		expect(asked("subreaper", { becomeSubreaper: () => (subreaper = true) })).toMatchObject({
			mode: "subreaper",
		});
		expect(subreaper).toBe(true);
		expect(asked("pid-namespace", { which: () => null })).toEqual({
			mode: "subreaper",
			reason:
				"CHOPIN_CONTAINMENT asked for pid-namespace; bubblewrap (bwrap) is not installed; prctl(PR_SET_CHILD_SUBREAPER) worked",
		});
		expect(asked(" ")).toMatchObject({ mode: "pid-namespace" });
	});

	test("CHOPIN_CONTAINMENT with a mode this system does not have is option-invalid", () => {
		for (const [platform, value] of [
			["linux", "tree"],
			["linux", "namespace"],
			["darwin", "subreaper"],
			["win32", "group"],
		] as const) {
			let error: unknown;
			try {
				chooseContainment({ ...linux(), platform, env: { CHOPIN_CONTAINMENT: value } });
			} catch (caught) {
				error = caught;
			}
			expect(error).toBeInstanceOf(CliError);
			expect((error as CliError).code).toBe("option-invalid");
			expect((error as CliError).message).toContain(JSON.stringify(value));
			expect((error as CliError).hint).toBe("Unset CHOPIN_CONTAINMENT to let chopin choose.");
		}
	});

	test.skipIf(!Bun.which("bwrap"))("this machine's real bwrap makes a PID namespace", () => {
		expect(chooseContainment({ platform: "linux", becomeSubreaper: () => false })).toMatchObject({
			mode: "pid-namespace",
			bwrap: Bun.which("bwrap")!,
		});
	});

	test("each mode says what it guarantees", () => {
		expect(describeContainment({ mode: "group", reason: "" })).toContain(
			"leaves its group (setsid) is not found",
		);
		expect(describeContainment({ mode: "pid-namespace", reason: "" })).toContain("PID namespace");
	});
});

describe("PID namespace argv", () => {
	test("a command of its own is wrapped in a namespace-only bwrap: the file system as it is, its own /proc", () => {
		expect(namespacedArgv("/usr/bin/bwrap", ["my-planner", "--flag"])).toEqual([
			"/usr/bin/bwrap",
			"--dev-bind",
			"/",
			"/",
			"--proc",
			"/proc",
			"--unshare-pid",
			"--die-with-parent",
			"--",
			"my-planner",
			"--flag",
		]);
		expect(NAMESPACE_ARGS).toContain("--unshare-pid");
	});

	test("a sandbox's argv is kept, with --unshare-pid and --die-with-parent added only when missing", () => {
		const sandbox = ["bwrap", "--die-with-parent", "--ro-bind", "/", "/", "--", "planner", "--unshare-pid"];
		expect(withPidNamespace(sandbox)).toEqual(["bwrap", "--unshare-pid", ...sandbox.slice(1)]);
		const complete = ["bwrap", "--unshare-pid", "--die-with-parent", "--ro-bind", "/", "/", "--", "planner"];
		expect(withPidNamespace(complete)).toEqual(complete);
	});
});
