// The emulator's HTML: the "Sign in to GitHub (emulator)" page that lists the fixture's users as
// buttons (for a person or a headless browser), its error pages, and the avatars its users show.
import type { User } from "./github-world";

function escapeHtml(text: string): string {
	return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
	// The empty icon keeps a browser from asking for /favicon.ico on every visit.
	return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 4rem auto; padding: 0 1rem; color: #1f2328; }
h1 { font-size: 1.5rem; font-weight: 400; text-align: center; }
form { border: 1px solid #d0d7de; border-radius: 6px; padding: 1rem; background: #f6f8fa; }
button { display: block; width: 100%; margin: 0.5rem 0; padding: 0.5rem; font-size: 1rem; cursor: pointer; }
button.deny { background: none; border: none; color: #0969da; }
p.note { font-size: 0.85rem; color: #59636e; }
</style>
</head>
<body>
${body}
</body>
</html>`;
}

export function htmlResponse(html: string, status = 200): Response {
	return new Response(html, { status, headers: { "content-type": "text/html; charset=utf-8" } });
}

/** The account picker; its form posts back to /login/oauth/authorize with the chosen login. */
export function signInPage(options: {
	appName: string;
	users: User[];
	clientId: string;
	redirectUri?: string;
	state?: string;
}): Response {
	const hidden = (name: string, value: string | undefined) =>
		value === undefined ? "" : `<input type="hidden" name="${name}" value="${escapeHtml(value)}">\n`;
	const buttons = options.users
		.map(
			(u) =>
				`<button type="submit" name="login" value="${escapeHtml(u.login)}" data-login="${escapeHtml(u.login)}">Sign in as ${escapeHtml(u.login)}${u.name ? ` (${escapeHtml(u.name)})` : ""}</button>`,
		)
		.join("\n");
	return htmlResponse(
		page(
			"Sign in to GitHub (emulator)",
			`<h1>Sign in to GitHub (emulator)</h1>
<p>to continue to <strong>${escapeHtml(options.appName)}</strong></p>
<form method="post" action="/login/oauth/authorize">
${hidden("client_id", options.clientId)}${hidden("redirect_uri", options.redirectUri)}${hidden("state", options.state)}${buttons || "<p>The fixture has no users.</p>"}
<button type="submit" name="deny" value="1" class="deny">Cancel</button>
</form>
<p class="note">This is the Chopin test emulator, not GitHub. Choosing an account authorizes the app as that user.</p>`,
		),
	);
}

export function errorPage(status: number, title: string, message: string): Response {
	return htmlResponse(
		page(
			`${title} · GitHub (emulator)`,
			`<h1>${escapeHtml(title)}</h1>\n<p role="alert">${escapeHtml(message)}</p>`,
		),
		status,
	);
}

/** A plain avatar: the login's first letter on a colour taken from the id. */
export function avatarResponse(id: number, login: string): Response {
	const hue = (id * 47) % 360;
	const letter = escapeHtml((login[0] ?? "?").toUpperCase());
	const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" fill="hsl(${hue} 55% 55%)"/><text x="32" y="43" font-family="sans-serif" font-size="30" text-anchor="middle" fill="#fff">${letter}</text></svg>`;
	return new Response(svg, { headers: { "content-type": "image/svg+xml", "cache-control": "max-age=300" } });
}
