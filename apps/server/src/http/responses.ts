// JSON responses: never cached, since API answers depend on who asks and change with every write.

export function jsonResponse(
	body: unknown,
	init: { status?: number; headers?: Record<string, string> } = {},
): Response {
	return new Response(JSON.stringify(body), {
		status: init.status ?? 200,
		headers: {
			"content-type": "application/json; charset=utf-8",
			"cache-control": "no-store",
			...init.headers,
		},
	});
}
