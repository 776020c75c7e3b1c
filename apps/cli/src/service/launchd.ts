// The LaunchAgent: bootstrapped into the user's gui/<uid> domain with launchctl, booted out to stop and remove it, its
// state read from `launchctl print`.
import { CliError } from "../program/errors";
import { waitForExit } from "./daemon-control";
import { say } from "./deps";
import { launchdPlist, plistArgv } from "./launchd-plist";
import { LAUNCHD_LABEL } from "./names";
import type { ManagerState, PlatformService } from "./platform";
import { failureText, runOrFail, serviceFailed } from "./runner";

/** launchctl's "Input/output error": a bootstrap right after a bootout, before launchd let the old one go. */
const BOOTSTRAP_BUSY = 5;
const BOOTSTRAP_ATTEMPTS = 5;
const BOOTSTRAP_RETRY_MS = 1_000;

const domain = (uid: number) => `gui/${uid}`;
const target = (uid: number) => `gui/${uid}/${LAUNCHD_LABEL}`;

export const launchdService: PlatformService = {
	kind: "launchd",

	async check(deps) {
		const result = await deps.run(["launchctl", "print", domain(deps.uid)]);
		if (result.exitCode !== 0) {
			throw new CliError(
				"service-manager-unavailable",
				`launchd has no login session for this user (\`launchctl print ${domain(deps.uid)}\`: ${failureText(result).replace(/\.$/, "")}): a LaunchAgent runs in the session of someone logged in at the Mac.`,
				"Log in at the Mac (its screen, or Screen Sharing) and run `chopin service install` again, or start `chopin run` yourself.",
			);
		}
	},

	async install(deps, definition, stopOther) {
		deps.files.write(definition.file, launchdPlist(definition), 0o644);
		const state = await launchdService.query(deps);
		await stopOther(state.active ? state.pid : undefined);
		// Booted out first (nothing loaded is fine): a reinstall replaces the running daemon with the new definition.
		await deps.run(["launchctl", "bootout", target(deps.uid)]);
		if (state.pid !== undefined) await waitForExit(deps, state.pid);
		// A service someone disabled (`launchctl disable`) stays disabled across bootstraps: installing means enabled.
		await runOrFail(deps.run, ["launchctl", "enable", target(deps.uid)]);
		const bootstrap = ["launchctl", "bootstrap", domain(deps.uid), definition.file];
		for (let attempt = 1; ; attempt++) {
			const result = await deps.run(bootstrap);
			if (result.exitCode === 0) return;
			if (result.exitCode !== BOOTSTRAP_BUSY || attempt >= BOOTSTRAP_ATTEMPTS)
				throw serviceFailed(bootstrap, result);
			await deps.clock.sleep(BOOTSTRAP_RETRY_MS, deps.signal);
		}
	},

	async uninstall(deps, file) {
		const installed = deps.files.read(file) !== undefined;
		const state = await launchdService.query(deps);
		if (!installed && !state.loaded) return false;
		if (state.loaded) {
			// launchd sends SIGTERM and, after ExitTimeOut, SIGKILL; the daemon stops gracefully on the first.
			const out = await deps.run(["launchctl", "bootout", target(deps.uid)]);
			if (out.exitCode !== 0)
				say(deps, `warning: \`launchctl bootout ${target(deps.uid)}\` failed: ${failureText(out)}`);
			else if (state.pid !== undefined) await waitForExit(deps, state.pid);
		}
		deps.files.remove(file);
		return true;
	},

	async query(deps) {
		const result = await deps.run(["launchctl", "print", target(deps.uid)]);
		if (result.exitCode !== 0) {
			// 113: "Could not find service ... in domain": not loaded, which is an answer, not a problem.
			const notLoaded =
				result.exitCode === 113 || /could not find service/i.test(result.stderr + result.stdout);
			return notLoaded
				? { loaded: false, active: false, stoppable: false }
				: { loaded: false, active: undefined, stoppable: false, problem: failureText(result) };
		}
		// The service's own lines are indented once; deeper ones belong to its endpoints and sockets.
		const field = (name: string) => new RegExp(`^\\t${name} = (.*)$`, "m").exec(result.stdout)?.[1]?.trim();
		const pid = Number(field("pid"));
		const running = field("state") === "running";
		const lastExit = field("last exit code");
		const state: ManagerState = {
			loaded: true,
			active: running,
			stoppable: running,
			pid: running && Number.isSafeInteger(pid) && pid > 0 ? pid : undefined,
		};
		if (lastExit && lastExit !== "0" && !lastExit.startsWith("(never"))
			state.lastExit = `launchd: last exit code ${lastExit}`;
		return state;
	},

	async stop(deps) {
		const state = await launchdService.query(deps);
		if (!state.active || state.pid === undefined) return false;
		// SIGTERM: the daemon stops gracefully and exits 0, which KeepAlive's SuccessfulExit=false does not restart.
		await runOrFail(deps.run, ["launchctl", "kill", "SIGTERM", target(deps.uid)]);
		await waitForExit(deps, state.pid);
		return true;
	},

	argvOf(deps, file) {
		const bytes = deps.files.read(file);
		return bytes === undefined ? undefined : plistArgv(new TextDecoder().decode(bytes));
	},
};
