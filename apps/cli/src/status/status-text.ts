// `chopin status` for a person: the report as aligned lines, the most useful first, never a secret.
import type { StatusReport } from "./status-report";

export function formatStatus(report: StatusReport): string {
	const lines: string[] = [`chopin ${report.version} (installed with ${report.installMethod})`];
	const { credential, config, daemon, connection } = report;
	const row = (label: string, text: string) => lines.push(`${`${label}:`.padEnd(12)}${text}`);

	if (daemon.running) {
		const pending = daemon.restartPending
			? `; restart pending: it runs ${daemon.version}, ${report.version} is installed`
			: "";
		row(
			"Daemon",
			`running, pid ${daemon.pid}, version ${daemon.version}, since ${daemon.startedAt}${pending}`,
		);
	} else {
		const last = daemon.lastExit;
		const ended =
			last === null
				? ""
				: last.exitCode === 0
					? `; stopped ${last.at}`
					: `; the last one ended ${last.at} with exit ${last.exitCode}: ${last.message}`;
		row("Daemon", `not running${daemon.problem ? ` (${daemon.problem})` : ""}${ended}`);
	}
	row("Server", report.server ?? "none");
	const account = report.account;
	const machine = report.machine ? ` (machine ${report.machine.id} "${report.machine.label}")` : "";
	if (account.login) row("Account", `${account.login}${machine}, as the ${account.source} says`);
	else row("Account", `unknown${account.problem ? ` (${account.problem})` : ""}`);

	if (!credential.stored) row("Paired", "no (run `chopin connect`)");
	else if (!credential.valid) row("Paired", `credential unreadable (${credential.problem})`);
	else
		row(
			"Paired",
			`yes, with ${credential.server} as machine ${credential.machineId} since ${credential.createdAt}`,
		);
	if (credential.stored) row("Credential", `stored in ${credential.file}`);

	row("Connection", connectionText(connection));

	if (config.configured) {
		row("Machine", `${config.label} (${config.file})`);
		if (config.acpCommand) row("ACP agent", config.acpCommand.join(" "));
		if (config.planner) {
			const planner = config.planner;
			row("Planner", `${planner.command.join(" ")}${planner.agent ? ` (agent ${planner.agent})` : ""}`);
			row(
				"Sandbox",
				`${planner.sandbox.enabled ? "on" : "off"}${planner.envKeys.length > 0 ? `; env ${planner.envKeys.join(", ")}` : ""}`,
			);
			for (const doc of planner.documents) lines.push(`  document  ${doc.document}`);
		}
	} else if ("problem" in config) {
		row("Machine", `config unreadable (${config.problem})`);
	} else {
		row("Machine", "not configured");
	}

	if (report.checkouts.length === 0) row("Checkouts", "none");
	else lines.push("Checkouts:");
	for (const c of report.checkouts) {
		const state = c.served
			? `${c.state}${c.lastContact ? `, last contact ${c.lastContact}` : ""}${c.access ? `, access ${c.access}` : ""}`
			: "not served by a daemon";
		lines.push(`  ${c.repository}  ${c.path}  (${state})`);
	}
	// The daemon knows its live runs and its latest ended ones; every kept workspace is on disk for `workspaces list`.
	const kept = "`chopin workspaces list` shows every kept workspace";
	if (report.runs.length === 0) row("Runs", daemon.running ? `none (${kept})` : `none running (${kept})`);
	else lines.push(`Runs (${kept}):`);
	for (const run of report.runs)
		lines.push(
			`  ${run.id}  ${run.kind ?? "run"}  ${run.status}  ${run.worktree}${run.branch ? `  (branch ${run.branch})` : ""}`,
		);
	if (report.planners.length === 0) row("Planners", "none");
	else lines.push("Planners:");
	for (const p of report.planners) {
		const what = p.title ? `${p.document} "${p.title}"` : p.document;
		lines.push(`  ${what}  ${p.state ?? "assigned, not started"}${p.worktree ? `  ${p.worktree}` : ""}`);
		const details = [
			p.pid === undefined ? undefined : `pid ${p.pid}`,
			p.restarts ? `${p.restarts} restart${p.restarts === 1 ? "" : "s"}` : undefined,
			p.sandbox === undefined
				? undefined
				: p.sandbox === "none"
					? `no sandbox${p.sandboxReason ? ` (${p.sandboxReason})` : ""}`
					: `sandbox ${p.sandbox}`,
			p.reason ? `last: ${p.reason}` : undefined,
		].filter((part) => part !== undefined);
		if (details.length > 0) lines.push(`    ${details.join("; ")}`);
	}
	row(
		"Service",
		`${report.service.state.replace("-", " ")} (${report.service.manager}, ${report.service.definition})`,
	);
	row("Log", report.logFile);
	return `${lines.join("\n")}\n`;
}

function connectionText(c: StatusReport["connection"]): string {
	switch (c.state) {
		case "not-running":
			return "none (no daemon)";
		case "connected":
			return `connected since ${c.since}${c.lastContact ? `, last contact ${c.lastContact}` : ""}`;
		case "connecting":
			return `connecting (attempt ${c.attempts})${c.lastError ? `; last: ${c.lastError}` : ""}`;
		case "waiting":
			return `reconnecting at ${c.nextAttemptAt ?? "soon"} (attempt ${c.attempts + 1})${c.lastError ? `; last: ${c.lastError}` : ""}`;
		case "stopped":
			return "stopped (the daemon is shutting down)";
	}
}
