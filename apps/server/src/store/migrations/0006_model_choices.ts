// A person's choice of model and thinking level for a document's Planner (capability-catalog, see docs/chat.md).
// - model and thinking_level are exactly as the client spelled them (never empty: NULL is no choice).
// - model_name is the model's catalog name when it was chosen, so the fallback notice can name it after the
//   client stops listing it.
// - fallback_noted is 1 once Chat recorded that a turn fell back to the client's default for this choice: it is
//   said once, and a new choice (or a turn that ran with it again) clears it.
export const sql = `
CREATE TABLE document_model_choices (
	document_id TEXT PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
	model TEXT,
	model_name TEXT,
	thinking_level TEXT,
	fallback_noted INTEGER NOT NULL DEFAULT 0,
	chosen_by TEXT NOT NULL,
	chosen_at BIGINT NOT NULL
);
`;
