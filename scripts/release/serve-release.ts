// Serves a release directory on loopback, for the workflows' installer runs: the scripts as text (the way a Chopin
// server serves GET /install.ps1, so `irm | iex` gets a string on both PowerShells), every other file as bytes.
//
//   bun scripts/release/serve-release.ts <release dir>      prints http://127.0.0.1:<port>, serves until stopped
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Server } from "bun";

const SCRIPTS = new Set(["install.sh", "install.ps1"]);
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The file a path names, or "" when it is not one plain name (a malformed escape included). */
function fileName(path: string): string {
	try {
		const name = decodeURIComponent(path.slice(1));
		return NAME.test(name) ? name : "";
	} catch {
		return "";
	}
}

/** Serves the files directly inside `dir` at /<name> on 127.0.0.1 (a port the system picks); anything else is 404. */
export function serveRelease(dir: string): Server<undefined> {
	const root = resolve(dir);
	if (!existsSync(root) || !statSync(root).isDirectory()) throw new Error(`${dir} is not a directory`);
	return Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		async fetch(req) {
			const name = fileName(new URL(req.url).pathname);
			if (req.method !== "GET" && req.method !== "HEAD")
				return new Response("method not allowed\n", { status: 405 });
			const file = name ? Bun.file(join(root, name)) : undefined;
			if (!file || !(await file.exists())) return new Response("not found\n", { status: 404 });
			const type = SCRIPTS.has(name) ? "text/plain; charset=utf-8" : "application/octet-stream";
			return new Response(file, { headers: { "content-type": type } });
		},
	});
}

if (import.meta.main) {
	const [dir, ...rest] = Bun.argv.slice(2);
	if (!dir || rest.length > 0) {
		console.error("usage: bun scripts/release/serve-release.ts <release dir>");
		process.exit(2);
	}
	try {
		const server = serveRelease(dir);
		console.log(`http://127.0.0.1:${server.port}`);
	} catch (error) {
		console.error(`serve-release: ${(error as Error).message}`);
		process.exit(1);
	}
}
