// Every page of the app, shared by the server (which serves the shell at each path) and the browser
// (which picks the component). Adding a page is one line here and one component in app.tsx.

export interface PageRoute {
	/** A router pattern: literal segments and `:name` parameters. */
	readonly pattern: string;
	/** The component app.tsx shows for it. */
	readonly page: "documents" | "sign-in" | "document" | "pairing" | "machines";
	/** Whether a signed-out person is sent to sign in first. */
	readonly signIn: boolean;
}

export const PAGE_ROUTES: readonly PageRoute[] = [
	{ pattern: "/", page: "documents", signIn: true },
	{ pattern: "/sign-in", page: "sign-in", signIn: false },
	{ pattern: "/d/:id", page: "document", signIn: true },
	{ pattern: "/pair/:id", page: "pairing", signIn: true },
	{ pattern: "/machines", page: "machines", signIn: true },
];

/** The page a path shows and its parameters, or null for a path no page has. */
export function matchPage(pathname: string): { route: PageRoute; params: Record<string, string> } | null {
	const parts = pathname === "/" ? [] : pathname.replace(/\/$/, "").slice(1).split("/");
	for (const route of PAGE_ROUTES) {
		const segments = route.pattern === "/" ? [] : route.pattern.slice(1).split("/");
		if (segments.length !== parts.length) continue;
		const params: Record<string, string> = {};
		const ok = segments.every((segment, i) => {
			let part: string;
			try {
				part = decodeURIComponent(parts[i]!);
			} catch {
				return false;
			}
			if (segment.startsWith(":")) {
				params[segment.slice(1)] = part;
				return part !== "";
			}
			return segment === part;
		});
		if (ok) return { route, params };
	}
	return null;
}
