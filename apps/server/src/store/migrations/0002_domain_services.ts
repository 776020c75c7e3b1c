// What the domain services need beyond 0001 (see docs/documents.md, docs/chat.md, docs/decisions.md):
// - document_images: the digest of the bytes as uploaded (an image over MAX_STORED_IMAGE_BYTES is stored
//   as a smaller copy whose digest differs, and the same upload must give the same path again without
//   re-encoding it), and the stored image's size in pixels; image_thumbnails caches Chat's ?w= copies.
// - chat_messages: a failed reply's error line, and the images a turn made and the ones it could not
//   show (JSON); chat_tool_calls holds the rows of Work details.
// - decisions: the order cards were asked in, the input-request's session and workflow ids, why a named
//   block was not linked, why it settled, and a version bumped by every change, which also serialises
//   two members answering at once (see decisions/service.ts).
export const sql = `
ALTER TABLE document_images ADD COLUMN source_sha256 TEXT;
ALTER TABLE document_images ADD COLUMN width INTEGER;
ALTER TABLE document_images ADD COLUMN height INTEGER;
CREATE INDEX document_images_source ON document_images (document_id, source_sha256);

CREATE TABLE image_thumbnails (
	sha256 TEXT NOT NULL,
	width INTEGER NOT NULL,
	media_type TEXT NOT NULL,
	ext TEXT NOT NULL,
	bytes BYTEA NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (sha256, width)
);

ALTER TABLE chat_messages ADD COLUMN error TEXT;
ALTER TABLE chat_messages ADD COLUMN images TEXT NOT NULL DEFAULT '[]';
ALTER TABLE chat_messages ADD COLUMN refused_images TEXT NOT NULL DEFAULT '[]';
CREATE INDEX chat_messages_document_role ON chat_messages (document_id, role, seq);

CREATE TABLE chat_tool_calls (
	message_id TEXT NOT NULL REFERENCES chat_messages (id) ON DELETE CASCADE,
	tool_call_id TEXT NOT NULL,
	position INTEGER NOT NULL,
	name TEXT NOT NULL,
	input TEXT NOT NULL,
	status TEXT NOT NULL,
	result TEXT,
	error_label TEXT,
	error_message TEXT,
	image_count INTEGER NOT NULL DEFAULT 0,
	started_at BIGINT NOT NULL,
	ended_at BIGINT,
	PRIMARY KEY (message_id, tool_call_id)
);

ALTER TABLE decisions ADD COLUMN seq BIGINT;
ALTER TABLE decisions ADD COLUMN session TEXT;
ALTER TABLE decisions ADD COLUMN workflow_run_id TEXT;
ALTER TABLE decisions ADD COLUMN workflow_stage_id TEXT;
ALTER TABLE decisions ADD COLUMN root_run_id TEXT;
ALTER TABLE decisions ADD COLUMN unlinked_reason TEXT;
ALTER TABLE decisions ADD COLUMN settled_reason TEXT;
ALTER TABLE decisions ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX decisions_document_seq ON decisions (document_id, seq);
CREATE INDEX decisions_document_session ON decisions (document_id, session, status);
`;
