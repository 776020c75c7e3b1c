// The systemd user unit: installed with linger (so it runs at boot and after logout), enabled and restarted through
// `systemctl --user`; uninstalled with `disable --now`; its state read from `systemctl --user show`.
import { CliError } from "../program/errors";
import type { ServiceDeps } from "./deps";
import { say } from "./deps";
import { SYSTEMD_UNIT } from "./names";
import type { ManagerState, PlatformService } from "./platform";
import { commandText, failureText, runOrFail } from "./runner";
import { systemdUnit, unitArgv } from "./systemd-unit";

const SHOWN = ["LoadState", "ActiveState", "SubState", "MainPID", "Result", "ExecMainStatus"];

export const systemdService: PlatformService = {
	kind: "systemd",

	async check(deps) {
		if (!deps.systemdBooted()) {
			throw new CliError(
				"service-manager-unavailable",
				"This system does not run systemd as its init (a container, or WSL without systemd), so there is no user service manager to install chopin into.",
				"Start `chopin run` from your own startup instead (a login script, or the container's command); on WSL, set `systemd=true` under [boot] in /etc/wsl.conf and restart WSL (`wsl --shutdown`).",
			);
		}
		const reach = await deps.run(["systemctl", "--user", "show", "--property=Version"]);
		if (reach.exitCode !== 0) {
			throw new CliError(
				"service-manager-unavailable",
				`\`systemctl --user\` cannot reach your systemd user manager: ${failureText(reach).replace(/\.$/, "")}.`,
				"Run `chopin service install` in a session you logged in to as this user (not through su or sudo, which leave no user manager or XDG_RUNTIME_DIR), or start `chopin run` from your own startup instead.",
			);
		}
		await ensureLinger(deps);
	},

	async install(deps, definition, stopOther) {
		deps.files.write(definition.file, systemdUnit(definition), 0o644);
		await runOrFail(deps.run, ["systemctl", "--user", "daemon-reload"]);
		await runOrFail(deps.run, ["systemctl", "--user", "enable", SYSTEMD_UNIT]);
		const state = await systemdService.query(deps);
		await stopOther(state.active ? state.pid : undefined);
		// restart, not start: a reinstall (a new binary, a new PATH) must replace the daemon that runs.
		await runOrFail(deps.run, ["systemctl", "--user", "restart", SYSTEMD_UNIT]);
	},

	async uninstall(deps, file) {
		if (deps.files.read(file) === undefined) return false;
		const stop = ["systemctl", "--user", "disable", "--now", SYSTEMD_UNIT];
		const stopped = await deps.run(stop);
		if (stopped.exitCode !== 0) {
			say(
				deps,
				`warning: \`${commandText(stop)}\` failed (${failureText(stopped).replace(/\.$/, "")}); the unit is removed without stopping a daemon it may run.`,
			);
			// Works without a reachable manager: it only removes the default.target.wants link.
			await deps.run(["systemctl", "--user", "disable", SYSTEMD_UNIT]);
		}
		deps.files.remove(file);
		const reload = await deps.run(["systemctl", "--user", "daemon-reload"]);
		if (reload.exitCode !== 0 && stopped.exitCode === 0)
			say(deps, `warning: \`systemctl --user daemon-reload\` failed: ${failureText(reload)}`);
		return true;
	},

	async query(deps) {
		const result = await deps.run([
			"systemctl",
			"--user",
			"show",
			SYSTEMD_UNIT,
			`--property=${SHOWN.join(",")}`,
		]);
		if (result.exitCode !== 0)
			return { loaded: false, active: undefined, stoppable: false, problem: failureText(result) };
		const p = Object.fromEntries(
			result.stdout
				.split("\n")
				.map((line) => line.trim())
				.filter((line) => line.includes("="))
				.map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
		);
		const pid = Number(p.MainPID);
		const active = p.ActiveState === "active" || p.ActiveState === "reloading";
		const state: ManagerState = {
			loaded: p.LoadState === "loaded",
			active,
			// "activating" with SubState auto-restart: waiting out RestartSec before the next start.
			stoppable: p.ActiveState !== undefined && !["inactive", "failed"].includes(p.ActiveState),
			pid: Number.isSafeInteger(pid) && pid > 0 ? pid : undefined,
		};
		if (p.Result && p.Result !== "success")
			state.lastExit = `systemd: ${p.Result}${p.ExecMainStatus ? `, exit status ${p.ExecMainStatus}` : ""}${p.SubState === "auto-restart" ? ", restarting" : ""}`;
		return state;
	},

	async stop(deps) {
		const state = await systemdService.query(deps);
		if (!state.stoppable) return false;
		// systemd sends SIGTERM (the daemon stops gracefully, exit 0) and waits for it: a manual stop is never restarted.
		await runOrFail(deps.run, ["systemctl", "--user", "stop", SYSTEMD_UNIT]);
		return true;
	},

	argvOf(deps, file) {
		const text = deps.files.read(file);
		return text === undefined ? undefined : unitArgv(new TextDecoder().decode(text));
	},
};

/**
 * Linger makes systemd start the user's manager at boot and keep it after logout. Users may usually turn it on for
 * themselves (polkit's set-self-linger); where that needs an administrator, install nothing and name the one command.
 */
async function ensureLinger(deps: ServiceDeps): Promise<void> {
	const shown = await deps.run(["loginctl", "show-user", deps.user, "--property=Linger", "--value"]);
	if (shown.exitCode === 0 && shown.stdout.trim() === "yes") return;
	const enable = await deps.run(["loginctl", "--no-ask-password", "enable-linger", deps.user]);
	if (enable.exitCode !== 0) {
		throw new CliError(
			"service-linger-needs-admin",
			`Keeping ${deps.user}'s service running after logout and at boot (systemd's linger) needs an administrator here (${failureText(enable).replace(/\.$/, "")}): nothing was installed.`,
			`Run \`sudo loginctl enable-linger ${deps.user}\`, then \`chopin service install\` again.`,
		);
	}
	say(
		deps,
		`Turned on linger for ${deps.user}: systemd starts your services at boot and keeps them after logout.`,
	);
}
