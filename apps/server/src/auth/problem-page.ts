// A refusal shown to a browser as a small HTML page, or as the usual JSON to anything else (sign-in callbacks are navigations).
import type { HttpError } from "../http/errors";

const escapeHtml = (text: string) =>
	text.replace(
		/[&<>"']/g,
		(c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
	);

/** The error as a page when the request accepts HTML first, else as JSON; extra Set-Cookie values are appended. */
export function problemResponse(
	req: Request,
	error: HttpError,
	options: { cookies?: string[]; retry?: { href: string; label: string } } = {},
): Response {
	const wantsHtml = (req.headers.get("accept") ?? "").includes("text/html");
	let res: Response;
	if (wantsHtml) {
		const retry = options.retry
			? `<p><a href="${escapeHtml(options.retry.href)}">${escapeHtml(options.retry.label)}</a></p>`
			: "";
		const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Chopin: ${escapeHtml(error.message)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}code{color:#666}</style>
</head><body>
<h1>${escapeHtml(error.message)}</h1>
${error.hint ? `<p>${escapeHtml(error.hint)}</p>` : ""}
${retry}
<p><code>${escapeHtml(error.code)}</code></p>
</body></html>`;
		res = new Response(html, {
			status: error.status,
			headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...error.headers },
		});
	} else {
		res = error.toResponse();
	}
	for (const cookie of options.cookies ?? []) res.headers.append("set-cookie", cookie);
	return res;
}
