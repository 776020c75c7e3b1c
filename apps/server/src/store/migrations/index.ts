// Every migration, in order. Add a file `NNNN_<name>.ts` exporting `sql` and list it here; never edit a shipped one.
import { sql as initial } from "./0001_initial";
import { sql as domainServices } from "./0002_domain_services";
import { sql as machines } from "./0003_machines";
import { sql as builds } from "./0004_builds";
import { sql as plannerLinkHolds } from "./0005_planner_link_holds";
import { sql as modelChoices } from "./0006_model_choices";
import { sql as chatAttachments } from "./0007_chat_attachments";
import { sql as chatThreads } from "./0008_chat_threads";
import { sql as answerFollowUps } from "./0009_answer_follow_ups";

export interface Migration {
	version: number;
	name: string;
	sql: string;
}

/** Keys are the file names; versions must run 1, 2, 3… with no gaps. */
export const MIGRATIONS: readonly Migration[] = defineMigrations({
	"0001_initial": initial,
	"0002_domain_services": domainServices,
	"0003_machines": machines,
	"0004_builds": builds,
	"0005_planner_link_holds": plannerLinkHolds,
	"0006_model_choices": modelChoices,
	"0007_chat_attachments": chatAttachments,
	"0008_chat_threads": chatThreads,
	"0009_answer_follow_ups": answerFollowUps,
});

export function defineMigrations(files: Record<string, string>): Migration[] {
	const list = Object.entries(files).map(([file, sql]) => {
		const m = /^(\d{4})_([a-z0-9_]+)$/.exec(file);
		if (!m) throw new Error(`migration ${file} must be named NNNN_<name>`);
		return { version: Number(m[1]), name: m[2]!, sql };
	});
	list.forEach((m, i) => {
		if (m.version !== i + 1) throw new Error(`migration ${m.version} is out of order: expected ${i + 1}`);
	});
	return list;
}
