// `chopin service status --json`: the one shape, every key always present (null when unknown).
import { z } from "zod";

export const serviceStateSchema = z.enum(["not-installed", "running", "stopped", "restart-pending"]);

export const serviceStatusSchema = z.strictObject({
	state: serviceStateSchema,
	manager: z.enum(["systemd", "launchd", "task"]),
	/** The unit, the plist, or the copy of the task XML (whether or not it exists). */
	definition: z.string(),
	/** Where the service's output is appended. */
	logFile: z.string(),
	/** What the definition runs, read back from it. */
	argv: z.array(z.string()).nullable(),
	/** The running daemon's pid. */
	pid: z.number().int().positive().nullable(),
	/** The running daemon's version (from its control socket) and the installed binary's (its --version). */
	runningVersion: z.string().nullable(),
	installedVersion: z.string().nullable(),
	/** How the last daemon ended (daemon-exit.json), when the service is stopped. */
	lastExit: z
		.strictObject({
			at: z.string(),
			exitCode: z.number().int(),
			code: z.string(),
			message: z.string(),
			hint: z.string().nullable(),
		})
		.nullable(),
	/** The manager's own words about the last exit, when it has some. */
	managerSays: z.string().nullable(),
	/** What could not be found out, and why (the manager not reachable, the binary not answering). */
	problem: z.string().nullable(),
});

export type ServiceStatus = z.infer<typeof serviceStatusSchema>;
export type ServiceState = z.infer<typeof serviceStateSchema>;
