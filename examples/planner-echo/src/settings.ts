// What the connector hands a Planner backend in its environment, checked once at start-up, and the
// credential read fresh before every attach (spec: Planner backend commands, Environment).
import { z } from "zod";
import { EchoError } from "./errors";

const envSchema = z.object({
	CHOPIN_URL: z.url({ protocol: /^https?$/ }),
	CHOPIN_DOCUMENT: z.string().min(1).max(2048),
	CHOPIN_PLANNER_TOKEN_FILE: z.string().min(1).optional(),
	CHOPIN_PLANNER_TOKEN: z.string().min(1).optional(),
});

export interface Settings {
	/** The Chopin origin. */
	url: string;
	/** The document id or URL to attach. */
	document: string;
	/** Where the connector keeps a current credential; preferred over token. */
	tokenFile?: string;
	/** The launch's credential: used only when no token file is named. */
	token?: string;
}

/** Reads the settings from the environment; a missing or malformed variable is `env-invalid`, naming it. */
export function readSettings(env: Record<string, string | undefined>): Settings {
	const parsed = envSchema.safeParse(env);
	if (!parsed.success) {
		const name = String(parsed.error.issues[0]?.path[0] ?? "the environment");
		throw new EchoError(
			"env-invalid",
			`${name} is missing or not valid.`,
			"The connector sets CHOPIN_URL, CHOPIN_DOCUMENT and CHOPIN_PLANNER_TOKEN_FILE; run this under `chopin connect --planner-command`.",
		);
	}
	const data = parsed.data;
	if (!data.CHOPIN_PLANNER_TOKEN_FILE && !data.CHOPIN_PLANNER_TOKEN) {
		throw new EchoError(
			"env-invalid",
			"Neither CHOPIN_PLANNER_TOKEN_FILE nor CHOPIN_PLANNER_TOKEN is set.",
			"The connector sets both; by hand, put a bearer in a mode 0600 file and name it in CHOPIN_PLANNER_TOKEN_FILE.",
		);
	}
	return {
		url: data.CHOPIN_URL,
		document: data.CHOPIN_DOCUMENT,
		tokenFile: data.CHOPIN_PLANNER_TOKEN_FILE,
		token: data.CHOPIN_PLANNER_TOKEN,
	};
}

/**
 * The credential to attach with now. The connector replaces the file before the credential expires,
 * so it is read before every attempt; a file that is gone means the machine was revoked or Chopin no
 * longer asks it to run the document, and the backend must exit (`credential-gone`).
 */
export async function readToken(
	settings: Settings,
	readFile: (path: string) => Promise<string>,
): Promise<string> {
	if (!settings.tokenFile) return settings.token!;
	let text: string;
	try {
		text = await readFile(settings.tokenFile);
	} catch {
		throw new EchoError(
			"credential-gone",
			"The credential file CHOPIN_PLANNER_TOKEN_FILE names is gone or unreadable.",
			"The connector deletes it when the machine is revoked or the document is withdrawn; nothing to do here.",
		);
	}
	const token = text.trim();
	if (!token) {
		throw new EchoError(
			"credential-gone",
			"The credential file CHOPIN_PLANNER_TOKEN_FILE names is empty.",
			"The connector writes a credential there before it starts the backend.",
		);
	}
	return token;
}
