// The service manager for a platform: systemd on Linux, launchd on macOS, Task Scheduler on Windows.
import type { Platform } from "../local/paths";
import { launchdService } from "./launchd";
import { serviceManagerFor } from "./names";
import type { PlatformService } from "./platform";
import { systemdService } from "./systemd";
import { taskService } from "./task-scheduler";

export function platformService(platform: Platform): PlatformService {
	switch (serviceManagerFor(platform)) {
		case "systemd":
			return systemdService;
		case "launchd":
			return launchdService;
		case "task":
			return taskService;
	}
}
