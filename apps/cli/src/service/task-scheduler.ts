// The Task Scheduler task: created from its XML with schtasks, started with /Run, stopped through <state>/stop-request
// (Task Scheduler ends a task without a signal the daemon could act on) with /End only as the fallback.
import { joinPath } from "../local/plain-path";
import { runningDaemon, stopThroughFile } from "./daemon-control";
import type { ServiceDeps } from "./deps";
import { say } from "./deps";
import { TASK_NAME } from "./names";
import type { ManagerState, PlatformService } from "./platform";
import { failureText, runOrFail } from "./runner";
import { decodeTaskXml, taskArgv, taskXml, taskXmlBytes } from "./task-xml";

export const taskService: PlatformService = {
	kind: "task",

	async check() {
		// Every Windows has schtasks, and a task for one's own logon needs no administrator: nothing to ask first.
	},

	async install(deps, definition, stopOther) {
		const bytes = taskXmlBytes(taskXml(definition, deps.user));
		// schtasks reads the XML from a file; the copy kept in the state dir is written only once it accepted it.
		const pending = joinPath(deps.platform, deps.paths.stateDir, "service", "chopin-task.new.xml");
		deps.files.write(pending, bytes, 0o600);
		try {
			await runOrFail(deps.run, ["schtasks", "/Create", "/TN", TASK_NAME, "/XML", pending, "/F"]);
		} finally {
			deps.files.remove(pending);
		}
		deps.files.write(definition.file, bytes, 0o600);
		// /Create replaces the definition but not the daemon it runs: stop that one, so /Run starts the new one.
		await stopTaskDaemon(deps, await taskService.query(deps));
		await stopOther(undefined);
		await runOrFail(deps.run, ["schtasks", "/Run", "/TN", TASK_NAME]);
	},

	async uninstall(deps, file) {
		const installed = deps.files.read(file) !== undefined;
		const state = await taskService.query(deps);
		if (!installed && !state.loaded) return false;
		await stopTaskDaemon(deps, state);
		if (state.loaded) await runOrFail(deps.run, ["schtasks", "/Delete", "/TN", TASK_NAME, "/F"]);
		deps.files.remove(file);
		return true;
	},

	async query(deps) {
		const result = await deps.run(["schtasks", "/Query", "/TN", TASK_NAME, "/FO", "LIST", "/V"]);
		if (result.exitCode === 127)
			return { loaded: false, active: undefined, stoppable: false, problem: failureText(result) };
		// Not found is exit 1 ("ERROR: The system cannot find the file specified.").
		if (result.exitCode !== 0) return { loaded: false, active: false, stoppable: false };
		// The labels are in the system's language: an English "Status:" is read; otherwise the control socket decides.
		const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, "m").exec(result.stdout)?.[1]?.trim();
		const status = field("Status");
		const active = status === undefined ? undefined : status === "Running";
		const lastResult = field("Last Result");
		const state: ManagerState = { loaded: true, active, stoppable: active !== false };
		if (lastResult && !["0", "267009", "267011"].includes(lastResult))
			state.lastExit = `Task Scheduler: last result ${lastResult}`;
		return state;
	},

	async stop(deps) {
		const state = await taskService.query(deps);
		if (!state.loaded || state.active === false) return false;
		return stopTaskDaemon(deps, state);
	},

	argvOf(deps, file) {
		const bytes = deps.files.read(file);
		const text = bytes === undefined ? undefined : decodeTaskXml(bytes);
		return text === undefined ? undefined : taskArgv(text);
	},
};

/**
 * Stops the task's daemon (the one that says it runs under `task`): the stop request, and (should it not go in time)
 * `schtasks /End`, which ends it at once. A daemon started by hand is not the task's and is left alone. Whether there
 * was one to stop.
 */
async function stopTaskDaemon(deps: ServiceDeps, state: ManagerState): Promise<boolean> {
	const found = await runningDaemon(deps);
	const daemon = found?.service === "task" ? found : undefined;
	if (daemon && (await stopThroughFile(deps, daemon))) return true;
	if (!daemon && !state.active) return false;
	if (daemon)
		say(deps, `warning: the chopin daemon (pid ${daemon.pid}) did not stop when asked; ending its task.`);
	if (state.loaded) {
		const ended = await deps.run(["schtasks", "/End", "/TN", TASK_NAME]);
		if (ended.exitCode !== 0) say(deps, `warning: \`schtasks /End\` failed: ${failureText(ended)}`);
	}
	return true;
}
