// A release host on loopback for installer tests: GitHub's download layout over a release directory, with a request log and faults to order.
import { join } from "node:path";
import type { Server } from "bun";

export interface ReleaseServer extends AsyncDisposable {
	/** http://127.0.0.1:<port> */
	readonly origin: string;
	/** The CHOPIN_DOWNLOAD_URL that mirrors GitHub: <origin>/releases/download/v{version} */
	readonly downloadUrl: string;
	/** Every path asked for, in order. */
	readonly requests: string[];
	/** Files served by name instead of the directory's (or besides them): SHA256SUMS tampered with, a signature. */
	readonly files: Map<string, string>;
	/** Between tests: the request log emptied and no file served instead of the directory's. */
	reset(): void;
	close(): Promise<void>;
}

/**
 * Serves `dir` (a release directory from build-cli) as the release `version` at
 * /releases/download/v<version>/ and as the latest at /releases/latest/download/, and also
 * plainly at /mirror/ (a base without {version}). Anything else is 404.
 */
export function startReleaseServer(dir: string, version: string): ReleaseServer {
	const requests: string[] = [];
	const routes = [`/releases/download/v${version}/`, "/releases/latest/download/", "/mirror/"];
	const files = new Map<string, string>();
	const server: Server<undefined> = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		async fetch(req) {
			const path = new URL(req.url).pathname;
			requests.push(path);
			const prefix = routes.find((p) => path.startsWith(p));
			const name = prefix ? path.slice(prefix.length) : "";
			if (!/^[A-Za-z0-9._-]+$/.test(name)) return new Response("not found\n", { status: 404 });
			const text = files.get(name);
			if (text !== undefined) return new Response(text);
			const file = Bun.file(join(dir, name));
			return (await file.exists()) ? new Response(file) : new Response("not found\n", { status: 404 });
		},
	});
	const origin = `http://127.0.0.1:${server.port}`;
	const close = async () => {
		await server.stop(true);
	};
	return {
		origin,
		downloadUrl: `${origin}/releases/download/v{version}`,
		requests,
		files,
		reset: () => {
			requests.length = 0;
			files.clear();
		},
		close,
		[Symbol.asyncDispose]: close,
	};
}
