// Files a person sent with a Chat message (attachments, see docs/chat.md), kept with it so a Retry sends the same.
// - position is the order the person sent them in, from 0.
// - kind is image or file and media_type what the bytes showed (image/png, ..., text/plain), never a name's guess.
// - name is the cleaned label (no folder, no control characters, at most 255 characters).
export const sql = `
CREATE TABLE chat_message_attachments (
	message_id TEXT NOT NULL REFERENCES chat_messages (id) ON DELETE CASCADE,
	position INTEGER NOT NULL,
	name TEXT NOT NULL,
	kind TEXT NOT NULL,
	media_type TEXT NOT NULL,
	size BIGINT NOT NULL,
	bytes BYTEA NOT NULL,
	PRIMARY KEY (message_id, position)
);
`;
