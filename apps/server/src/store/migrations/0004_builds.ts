// Builds and investigations a person starts on a paired machine (see docs/machines.md § Runs), and whether each
// machine can run them at all.
// - machines.runner: the `runner` report of its last hello or report (JSON), NULL from a CLI before builds.
// - builds: one row per run (`run_` + 16 base32). `live_key` is the SHA-256 of document, kind, base and brief
//   while the run is not final, NULL after: its UNIQUE index is what makes a duplicate start return the same run
//   on both databases without a race. `idempotency_key` is the start's own key, unique per document.
//   `credential_digest` is the SHA-256 of the run's chopin_r_ credential (NULL until claimed) and
//   `credential_until` the end of its validity (NULL while the run is live). `control_request` names the
//   run-control the machine has yet to answer. A discarded run keeps its row (`discarded_at`).
// - build_log: each run's log lines, numbered per run (`builds.log_seq` is the last number given); capped per
//   run, the oldest deleted.
export const sql = `
ALTER TABLE machines ADD COLUMN runner TEXT;

CREATE TABLE builds (
	id TEXT PRIMARY KEY,
	document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
	kind TEXT NOT NULL,
	brief TEXT NOT NULL,
	base TEXT NOT NULL,
	requested_by TEXT NOT NULL,
	machine_id TEXT NOT NULL REFERENCES machines (id) ON DELETE CASCADE,
	idempotency_key TEXT,
	live_key TEXT UNIQUE,
	status TEXT NOT NULL,
	reason TEXT,
	stages TEXT NOT NULL DEFAULT '[]',
	blocker TEXT,
	pull_requests TEXT NOT NULL DEFAULT '[]',
	result TEXT,
	workspace TEXT,
	held_action TEXT,
	control_request TEXT,
	control TEXT,
	credential_digest TEXT UNIQUE,
	credential_until BIGINT,
	log_seq BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	claimed_at BIGINT,
	ended_at BIGINT,
	discarded_at BIGINT
);
CREATE UNIQUE INDEX builds_idempotency ON builds (document_id, idempotency_key);
CREATE INDEX builds_document ON builds (document_id, created_at);
CREATE INDEX builds_machine ON builds (machine_id, status);
CREATE INDEX builds_control_request ON builds (control_request);

CREATE TABLE build_log (
	build_id TEXT NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
	seq BIGINT NOT NULL,
	at BIGINT NOT NULL,
	kind TEXT NOT NULL,
	text TEXT NOT NULL,
	PRIMARY KEY (build_id, seq)
);
`;
