const T: [string, number][] = [["entry", performance.now()]];
const mark = (n: string) => T.push([n, performance.now()]);
(async () => {
	const mods = process.env.PROBE_MODS;
	if (mods) {
		for (const m of mods.split(",")) {
			if (m === "zod") await import("zod");
			if (m === "commander") await import("commander");
			if (m === "pino") await import("pino");
			if (m === "envpaths") await import("env-paths");
			if (m === "machine") await import("@chopin/agent-link/machine");
			if (m === "log") await import("./log");
			if (m === "paths") await import("./paths");
			if (m === "ipc") await import("./ipc");
			if (m === "status-report") await import("./status-report");
			if (m === "status") await import("./commands/status");
			if (m === "program") await import("./program");
			if (m === "stdout") process.stdout;
			if (m === "net") await import("node:net");
			if (m === "fs") await import("node:fs");
			mark(m);
		}
	}
	console.error(T.map(([n, t]) => `${n}=${t.toFixed(1)}`).join(" "));
})();
