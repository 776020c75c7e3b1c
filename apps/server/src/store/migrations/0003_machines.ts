// Paired machines (see docs/machines.md, Server side): machines and the authorization each holds, pairings,
// the Planner credentials they were issued (only digests), the Planner documents assigned to them, and each
// person's machine choices (a pin per repository, an override per document) and where documents last ran.
// - machines.credential_digest is NULL until the pairing is claimed: a machine nobody claimed holds no
//   credential and is removed with its expired pairing. Revoked machines keep their row (revoked_at).
// - machine_authorizations holds the confirming person's authorization as identity.store() gives it:
//   GitHub tokens sealed for the binding `machine:<id>`, or a local login.
export const sql = `
CREATE TABLE machines (
	id TEXT PRIMARY KEY,
	owner TEXT NOT NULL REFERENCES users (login) ON DELETE CASCADE,
	label TEXT NOT NULL,
	client_version TEXT NOT NULL,
	client_os TEXT NOT NULL,
	client_arch TEXT NOT NULL,
	client_install TEXT NOT NULL,
	repositories TEXT NOT NULL DEFAULT '[]',
	checkouts TEXT NOT NULL DEFAULT '[]',
	runs TEXT NOT NULL DEFAULT '[]',
	planners TEXT NOT NULL DEFAULT '[]',
	sandbox TEXT,
	auto_run INTEGER NOT NULL,
	credential_digest TEXT UNIQUE,
	created_at BIGINT NOT NULL,
	last_contact_at BIGINT NOT NULL,
	reported_at BIGINT,
	revoked_at BIGINT,
	reauthorize INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX machines_owner ON machines (owner, last_contact_at);

CREATE TABLE machine_authorizations (
	machine_id TEXT PRIMARY KEY REFERENCES machines (id) ON DELETE CASCADE,
	kind TEXT NOT NULL,
	login TEXT NOT NULL,
	github_id BIGINT,
	access_token_enc BYTEA,
	refresh_token_enc BYTEA,
	expires_at BIGINT,
	refresh_expires_at BIGINT,
	updated_at BIGINT NOT NULL
);

CREATE TABLE machine_pairings (
	id TEXT PRIMARY KEY,
	secret_digest TEXT NOT NULL,
	code TEXT NOT NULL,
	label TEXT NOT NULL,
	checkouts TEXT NOT NULL,
	client TEXT NOT NULL,
	address TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	confirmed_by TEXT,
	auto_run INTEGER,
	confirmed_at BIGINT,
	machine_id TEXT REFERENCES machines (id) ON DELETE SET NULL,
	claimed_at BIGINT
);
CREATE INDEX machine_pairings_expires_at ON machine_pairings (expires_at);
CREATE INDEX machine_pairings_address ON machine_pairings (address, expires_at);

CREATE TABLE planner_credentials (
	digest TEXT PRIMARY KEY,
	machine_id TEXT NOT NULL REFERENCES machines (id) ON DELETE CASCADE,
	document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
	expires_at BIGINT NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE INDEX planner_credentials_machine ON planner_credentials (machine_id, document_id);
CREATE INDEX planner_credentials_document ON planner_credentials (document_id);
CREATE INDEX planner_credentials_expires_at ON planner_credentials (expires_at);

CREATE TABLE machine_assignments (
	machine_id TEXT NOT NULL REFERENCES machines (id) ON DELETE CASCADE,
	document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
	chosen_by TEXT NOT NULL,
	assigned_at BIGINT NOT NULL,
	PRIMARY KEY (document_id)
);
CREATE INDEX machine_assignments_machine ON machine_assignments (machine_id);

CREATE TABLE machine_repository_pins (
	login TEXT NOT NULL,
	repository TEXT NOT NULL,
	machine_id TEXT NOT NULL REFERENCES machines (id) ON DELETE CASCADE,
	updated_at BIGINT NOT NULL,
	PRIMARY KEY (login, repository)
);
CREATE INDEX machine_repository_pins_machine ON machine_repository_pins (machine_id);

CREATE TABLE machine_document_overrides (
	login TEXT NOT NULL,
	document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
	machine_id TEXT NOT NULL REFERENCES machines (id) ON DELETE CASCADE,
	updated_at BIGINT NOT NULL,
	PRIMARY KEY (login, document_id)
);
CREATE INDEX machine_document_overrides_machine ON machine_document_overrides (machine_id);

CREATE TABLE machine_document_work (
	document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
	machine_id TEXT NOT NULL REFERENCES machines (id) ON DELETE CASCADE,
	at BIGINT NOT NULL,
	PRIMARY KEY (document_id, machine_id)
);
`;
