// A loopback origin nothing listens on (a port opened and closed again): requests to it are refused at once.
export function closedOrigin(): string {
	const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
	const port = server.port;
	server.stop(true);
	return `http://127.0.0.1:${port}`;
}
