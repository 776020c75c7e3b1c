// What a server restart carries over of a resumable Planner link (spec: After a server restart): one row per
// document whose Planner dropped with its work kept, or was live at a graceful stop's cut.
// - login, kind ("account" | "machine"), machine_id, sign_in_session_id: whose hold it is.
// - hold: JSON { sessions: [{ session, runs, requests: [{ request, decisionId, rootRunId? }] }], stops: [owed Stops] };
//   the answers given meanwhile are the Decisions' own results.
// - handover: 1 when written at a graceful stop's cut (the next process gives it HANDOVER_PLANNER_WINDOW_MS),
//   0 when its link had already dropped, or once a process rebuilt it (a crash after that finds it disconnected).
export const sql = `
CREATE TABLE planner_link_holds (
	document_id TEXT PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
	login TEXT NOT NULL,
	kind TEXT NOT NULL,
	machine_id TEXT,
	sign_in_session_id TEXT,
	hold TEXT NOT NULL,
	handover INTEGER NOT NULL,
	updated_at BIGINT NOT NULL
);
`;
