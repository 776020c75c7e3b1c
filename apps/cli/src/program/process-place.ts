// Where this process runs: its platform, environment, working directory, home and chopin's paths. Read from the real
// process here and in process-context.ts only; apart from the context so that `chopin status` can find the daemon's
// socket before it loads the rest of itself (status-main.ts).
import {
	type CliPaths,
	homeDir,
	type Platform,
	platformDirs,
	resolvePaths,
	toPlatform,
} from "../local/paths";

export interface ProcessPlace {
	readonly platform: Platform;
	readonly env: NodeJS.ProcessEnv;
	readonly cwd: string;
	readonly home: string;
	readonly paths: CliPaths;
}

export function processPlace(): ProcessPlace {
	const platform = toPlatform(process.platform);
	// Not copied: chopin never changes its own environment, and copying it costs every start ~0.3 ms.
	const env = process.env;
	const cwd = process.cwd();
	const home = homeDir(platform, env);
	const paths = resolvePaths({ env, platform, cwd, defaults: platformDirs(platform, env, home) });
	return { platform, env, cwd, home, paths };
}
