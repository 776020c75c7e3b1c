// The refs the connector itself writes into a checkout, each in a namespace of its own: the keep ref that holds a
// workspace's base commit, and the branches it brings back from a workspace. refs/heads, HEAD and the index are never among them.
import { CliError } from "../program/errors";

/** Whose workspace: a run (by its run id) or a Planner document (by its document id). */
export interface WorkspaceScope {
	kind: "run" | "planner";
	id: string;
}

/** Run ids (`run_…`) and document ids are letters, digits, `_` and `-`: nothing that could leave a ref's folder. */
const SCOPE_ID = /^[A-Za-z0-9_-]{1,64}$/;

function checked(scope: WorkspaceScope): WorkspaceScope {
	if (!SCOPE_ID.test(scope.id)) {
		throw new CliError(
			"workspace-create-failed",
			`${JSON.stringify(scope.id)} is not a run or document id chopin can name refs after.`,
		);
	}
	return scope;
}

/**
 * `refs/chopin/keep/<run|planner>/<id>`: holds the workspace's base commit in the checkout, so a gc
 * there never prunes objects the workspace borrows through its alternates (git help clone, --shared).
 */
export function keepRef(scope: WorkspaceScope): string {
	const { kind, id } = checked(scope);
	return `refs/chopin/keep/${kind}/${id}`;
}

/** `refs/remotes/chopin/<id>`: where the workspace's branches come back, as `refs/remotes/chopin/<id>/<branch>`. */
export function syncNamespace(scope: WorkspaceScope): string {
	return `refs/remotes/chopin/${checked(scope).id}`;
}
