// Every workspace under the state dir, as `chopin workspaces list` shows them: runs from their records, Planner
// documents' folders as found. Read from files only: no git runs in a folder an agent wrote.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type FolderKind, folderKind } from "./planner-workspace";
import { listRunRecords, type RunRecord } from "./run-record";

export interface ListedRunWorkspace {
	id: string;
	/** <state>/runs/<run id> */
	dir: string;
	record?: RunRecord;
	/** Whether the workspace folder is still there. */
	present: boolean;
	/** What is wrong with the record, when it cannot be read. */
	problem?: string;
}

export interface ListedPlannerWorkspace {
	document: string;
	repository: string;
	path: string;
	kind: FolderKind;
	/** `refs/heads/<branch>` or a commit id, from the folder's HEAD file (undefined when unreadable). */
	head?: string;
}

export function listWorkspaces(stateDir: string): {
	runs: ListedRunWorkspace[];
	planners: ListedPlannerWorkspace[];
} {
	const runs = listRunRecords(stateDir).map(({ id, dir, record, problem }) => ({
		id,
		dir,
		...(record ? { record } : {}),
		present: existsSync(record?.workspace ?? join(dir, "workspace")),
		...(problem ? { problem } : {}),
	}));
	const planners: ListedPlannerWorkspace[] = [];
	const base = join(stateDir, "planners");
	for (const owner of folders(base)) {
		for (const name of folders(join(base, owner))) {
			for (const document of folders(join(base, owner, name))) {
				const path = join(base, owner, name, document);
				const kind = folderKind(path);
				const head = kind === "workspace" ? readHead(path) : undefined;
				planners.push({ document, repository: `${owner}/${name}`, path, kind, ...(head ? { head } : {}) });
			}
		}
	}
	return { runs, planners };
}

function folders(dir: string): string[] {
	try {
		return readdirSync(dir, { withFileTypes: true })
			.filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
			.map((entry) => entry.name)
			.sort();
	} catch {
		return [];
	}
}

function readHead(path: string): string | undefined {
	try {
		const text = readFileSync(join(path, ".git", "HEAD"), "utf8").trim();
		return text.startsWith("ref: ") ? text.slice(5) : /^[0-9a-f]{40,64}$/.test(text) ? text : undefined;
	} catch {
		return undefined;
	}
}
