// Which sandbox Planner backends would run in on this machine, as the hello reports it (the next task runs them).
import type { Platform } from "../local/paths";

export interface SandboxReport {
	kind: "bwrap" | "sandbox-exec" | "none";
	reason?: string;
}

/**
 * bubblewrap on Linux and sandbox-exec on macOS when they are installed; none on Windows, when
 * the tool is missing, or when the config turned it off with --no-sandbox.
 */
export function sandboxKind(options: {
	platform: Platform;
	enabled: boolean;
	which: (command: string) => string | null;
}): SandboxReport {
	if (!options.enabled) return { kind: "none", reason: "turned off with --no-sandbox" };
	switch (options.platform) {
		case "linux":
			return options.which("bwrap")
				? { kind: "bwrap" }
				: { kind: "none", reason: "bubblewrap (bwrap) is not installed" };
		case "darwin":
			return options.which("sandbox-exec")
				? { kind: "sandbox-exec" }
				: { kind: "none", reason: "sandbox-exec is not available" };
		case "win32":
			return { kind: "none", reason: "no sandbox on Windows" };
	}
}
