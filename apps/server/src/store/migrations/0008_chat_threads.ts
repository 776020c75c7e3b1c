// Threads in Chat (see docs/chat.md, Threads) and the Planner sessions they branch from (session-forks).
// - chat_messages.thread_root: the top-level message a thread hangs off; NULL for the main Chat. A thread goes
//   with its root.
// - chat_fork_points: for a person's message whose turn finished, the Planner session and turn that answered it,
//   which a thread on it (or a later message of the same thread) forks from. Retry forgets it.
export const sql = `
ALTER TABLE chat_messages ADD COLUMN thread_root TEXT REFERENCES chat_messages (id) ON DELETE CASCADE;
CREATE INDEX chat_messages_thread ON chat_messages (thread_root, seq);

CREATE TABLE chat_fork_points (
	message_id TEXT PRIMARY KEY REFERENCES chat_messages (id) ON DELETE CASCADE,
	session TEXT NOT NULL,
	turn TEXT NOT NULL,
	recorded_at BIGINT NOT NULL
);
`;
