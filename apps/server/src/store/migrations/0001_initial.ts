// The tables of the first release (issue 3's domain): people and sessions, repositories, documents, Chat, Decisions, run cards.
// Written once for both databases: timestamps are BIGINT milliseconds since the epoch, booleans
// INTEGER 0/1, JSON TEXT, bytes BYTEA (SQLite accepts the name and stores blobs).
export const sql = `
CREATE TABLE users (
	login TEXT PRIMARY KEY,
	github_id BIGINT UNIQUE,
	name TEXT,
	avatar_url TEXT,
	created_at BIGINT NOT NULL
);

CREATE TABLE browser_sessions (
	id_digest TEXT PRIMARY KEY,
	login TEXT NOT NULL REFERENCES users (login) ON DELETE CASCADE,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	last_seen_at BIGINT NOT NULL,
	github_access_enc BYTEA,
	github_refresh_enc BYTEA,
	github_expires_at BIGINT,
	github_refresh_expires_at BIGINT
);
CREATE INDEX browser_sessions_login ON browser_sessions (login);
CREATE INDEX browser_sessions_expires_at ON browser_sessions (expires_at);

CREATE TABLE repositories (
	full_name TEXT PRIMARY KEY,
	owner TEXT NOT NULL,
	name TEXT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE INDEX repositories_owner ON repositories (owner);

CREATE TABLE documents (
	id TEXT PRIMARY KEY,
	repository TEXT NOT NULL REFERENCES repositories (full_name),
	title TEXT NOT NULL,
	source TEXT NOT NULL,
	revision BIGINT NOT NULL DEFAULT 0,
	archived INTEGER NOT NULL DEFAULT 0,
	deleted INTEGER NOT NULL DEFAULT 0,
	created_by TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);
CREATE INDEX documents_repository ON documents (repository, updated_at);

CREATE TABLE document_images (
	document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
	sha256 TEXT NOT NULL,
	ext TEXT NOT NULL,
	media_type TEXT NOT NULL,
	size BIGINT NOT NULL,
	bytes BYTEA NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (document_id, sha256)
);
CREATE INDEX document_images_sha256 ON document_images (sha256);

CREATE TABLE chat_messages (
	id TEXT PRIMARY KEY,
	document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
	seq BIGINT NOT NULL,
	author_login TEXT,
	role TEXT NOT NULL,
	body TEXT NOT NULL,
	status TEXT NOT NULL,
	reply_to TEXT REFERENCES chat_messages (id) ON DELETE SET NULL,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	UNIQUE (document_id, seq)
);
CREATE INDEX chat_messages_reply_to ON chat_messages (reply_to);

CREATE TABLE decisions (
	id TEXT PRIMARY KEY,
	document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
	request_id TEXT,
	method TEXT NOT NULL,
	input TEXT NOT NULL,
	block_index INTEGER,
	block_digest TEXT,
	status TEXT NOT NULL,
	result TEXT,
	created_at BIGINT NOT NULL,
	settled_at BIGINT,
	settled_by TEXT
);
CREATE INDEX decisions_document_status ON decisions (document_id, status, created_at);
CREATE INDEX decisions_request ON decisions (document_id, request_id);

CREATE TABLE decision_answers (
	decision_id TEXT NOT NULL REFERENCES decisions (id) ON DELETE CASCADE,
	question_index INTEGER NOT NULL,
	kind TEXT NOT NULL,
	answer TEXT NOT NULL,
	answered_by TEXT NOT NULL,
	answered_at BIGINT NOT NULL,
	PRIMARY KEY (decision_id, question_index)
);

CREATE TABLE run_cards (
	document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
	run_id TEXT NOT NULL,
	session TEXT,
	card TEXT NOT NULL,
	stages TEXT NOT NULL DEFAULT '[]',
	status TEXT NOT NULL,
	updated_at BIGINT NOT NULL,
	PRIMARY KEY (document_id, run_id)
);
CREATE INDEX run_cards_document_updated ON run_cards (document_id, updated_at);
`;
