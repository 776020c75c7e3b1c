// Reads the files that environment variables may point at (`LOCAL_ACCOUNTS=@/path/file.json`), so loadConfig stays pure.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError, type Env } from "./config";

/** Variables whose value may be `@<path>`: the file's contents replace the value. */
const FILE_VARIABLES = ["LOCAL_ACCOUNTS"] as const;

/** Returns a copy of env with every `@<path>` value replaced by that file's contents. */
export function readEnvFiles(env: Env, options: { cwd?: string } = {}): Env {
	const out: Env = { ...env };
	for (const name of FILE_VARIABLES) {
		const value = env[name]?.trim();
		if (!value?.startsWith("@")) continue;
		const path = resolve(options.cwd ?? process.cwd(), value.slice(1));
		try {
			out[name] = readFileSync(path, "utf8");
		} catch (error) {
			const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
			throw new ConfigError(name, `${name} names a file that cannot be read: ${path} (${code}).`);
		}
	}
	return out;
}
