// Answers a Planner's client is never given (docs/server.md, An answer nobody waits on): each reaches the Planner
// once, as a follow-up turn of its own, even across a restart before any Planner attaches. sent_at marks it taken.
export const sql = `
CREATE TABLE answer_follow_ups (
	decision_id TEXT PRIMARY KEY REFERENCES decisions (id) ON DELETE CASCADE,
	document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
	created_at BIGINT NOT NULL,
	sent_at BIGINT
);
CREATE INDEX answer_follow_ups_waiting ON answer_follow_ups (document_id, sent_at, created_at);
`;
