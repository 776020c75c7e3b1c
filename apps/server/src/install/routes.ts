// GET /install.sh and /install.ps1: the CLI installers, pointed at CLI_DOWNLOAD_URL, for `curl ... | sh` and `irm ... | iex`.
import type { AppContext } from "../context";
import type { Router } from "../http/router";
import { type InstallerName, readInstaller, withDownloadUrl } from "./scripts";

export function registerInstallRoutes(router: Router, ctx: AppContext): void {
	for (const name of ["install.sh", "install.ps1"] as const satisfies InstallerName[]) {
		// Built once: the scripts ship with the server and CLI_DOWNLOAD_URL is fixed for the process.
		const script = withDownloadUrl(name, readInstaller(name), ctx.config.cliDownloadUrl);
		router.get(
			`/${name}`,
			() =>
				new Response(script, {
					headers: {
						// Plain text: a browser shows it for reading, and `curl | sh` and `irm | iex` take it as is.
						"content-type": "text/plain; charset=utf-8",
						// Revalidated on every fetch, so a proxy never hands out a script from before an upgrade.
						"cache-control": "no-cache",
					},
				}),
		);
	}
}
