// What attach.document names: a document id, or its page URL on this server (<PUBLIC_URL>/d/<id>, the pages' scheme).

/** The path of a document's page; the attached document's url and read_plan's url use it too. */
export function documentUrl(publicUrl: string, id: string): string {
	return `${publicUrl}/d/${encodeURIComponent(id)}`;
}

/**
 * The document id a reference names, or null when it is a URL that is not a document page of this
 * server. A URL must be on PUBLIC_URL's origin with the path /d/<id> (a trailing slash, a query and
 * a fragment are ignored); anything that does not look like a URL is taken as an id.
 */
export function documentIdOf(reference: string, publicUrl: string): string | null {
	const text = reference.trim();
	if (!/^[a-z][a-z0-9+.-]*:/i.test(text)) return text || null;
	let url: URL;
	try {
		url = new URL(text);
	} catch {
		return null;
	}
	if (url.origin !== new URL(publicUrl).origin) return null;
	const match = /^\/d\/([^/]+)\/?$/.exec(url.pathname);
	if (!match) return null;
	try {
		return decodeURIComponent(match[1]!);
	} catch {
		return null;
	}
}
