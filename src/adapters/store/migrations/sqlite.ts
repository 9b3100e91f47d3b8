/**
 * SQLite schema migrations, in order. Applied by `SqliteOperationStore.migrate()` inside one BEGIN IMMEDIATE
 * transaction and recorded in `schema_migrations`. Published migrations are never edited: add a new one.
 */
import { type Migration } from './migration';

/** The SQLite migrations. */
export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'operation record, hash-chained journal, artifacts, webhook events',
    sql: `
CREATE TABLE operations (
  operation_id TEXT PRIMARY KEY,
  provider TEXT,
  local_state TEXT,
  remote_job_ids TEXT NOT NULL DEFAULT '[]',
  escalation_reason TEXT,
  result_deadline_at_ms INTEGER,
  updated_at TEXT,
  version INTEGER NOT NULL DEFAULT 0,
  snapshot TEXT,
  last_sequence INTEGER NOT NULL DEFAULT 0,
  last_hash TEXT
) STRICT;
CREATE INDEX operations_by_state ON operations (local_state, updated_at);
CREATE INDEX operations_by_escalation ON operations (escalation_reason) WHERE escalation_reason IS NOT NULL;
CREATE INDEX operations_by_deadline ON operations (result_deadline_at_ms) WHERE result_deadline_at_ms IS NOT NULL;

CREATE TABLE journal (
  operation_id TEXT NOT NULL REFERENCES operations (operation_id),
  sequence INTEGER NOT NULL CHECK (sequence > 0),
  at TEXT NOT NULL,
  actor TEXT NOT NULL,
  kind TEXT NOT NULL,
  entry TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL,
  to_state TEXT,
  remote_job_id TEXT,
  http_status INTEGER,
  delay_source TEXT,
  escalation_reason TEXT,
  PRIMARY KEY (operation_id, sequence)
) STRICT, WITHOUT ROWID;
CREATE INDEX journal_by_kind ON journal (kind, at);
CREATE INDEX journal_by_remote_job ON journal (remote_job_id) WHERE remote_job_id IS NOT NULL;
CREATE INDEX journal_by_escalation ON journal (escalation_reason) WHERE escalation_reason IS NOT NULL;

CREATE TABLE operation_jobs (
  provider TEXT NOT NULL,
  remote_job_id TEXT NOT NULL,
  operation_id TEXT NOT NULL REFERENCES operations (operation_id),
  PRIMARY KEY (provider, remote_job_id, operation_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE artifacts (
  operation_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  at TEXT NOT NULL,
  location TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  content_type TEXT,
  validation TEXT NOT NULL CHECK (validation IN ('valid', 'invalid', 'not_checked')),
  PRIMARY KEY (operation_id, sequence),
  FOREIGN KEY (operation_id, sequence) REFERENCES journal (operation_id, sequence)
) STRICT;
CREATE INDEX artifacts_by_sha256 ON artifacts (sha256);

CREATE TABLE webhook_events (
  provider TEXT NOT NULL,
  event_id TEXT NOT NULL,
  received_at TEXT NOT NULL,
  operation_id TEXT,
  event_type TEXT,
  payload_sha256 TEXT,
  PRIMARY KEY (provider, event_id)
) STRICT;

CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal
BEGIN SELECT RAISE(ABORT, 'ASYNCJOB_ERR_APPEND_ONLY: journal is append-only; UPDATE refused'); END;
CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal
BEGIN SELECT RAISE(ABORT, 'ASYNCJOB_ERR_APPEND_ONLY: journal is append-only; DELETE refused'); END;
CREATE TRIGGER artifacts_no_update BEFORE UPDATE ON artifacts
BEGIN SELECT RAISE(ABORT, 'ASYNCJOB_ERR_APPEND_ONLY: artifacts is append-only; UPDATE refused'); END;
CREATE TRIGGER artifacts_no_delete BEFORE DELETE ON artifacts
BEGIN SELECT RAISE(ABORT, 'ASYNCJOB_ERR_APPEND_ONLY: artifacts is append-only; DELETE refused'); END;
`,
  },
  {
    version: 2,
    name: 'provider sessions (V3): one serialised cookie jar per operation',
    sql: `
CREATE TABLE provider_sessions (
  operation_id TEXT PRIMARY KEY,
  jar TEXT NOT NULL CHECK (length(CAST(jar AS BLOB)) <= 65536),
  updated_at TEXT NOT NULL
) STRICT;
`,
  },
  {
    version: 3,
    name: 'audit (issue 15): signing key IDs, snapshot hashes, the checkpoint register',
    sql: `
ALTER TABLE journal ADD COLUMN key_id TEXT;
ALTER TABLE operations ADD COLUMN snapshot_hash TEXT;
ALTER TABLE operations ADD COLUMN snapshot_key_id TEXT;

CREATE TABLE audit_checkpoints (
  sequence INTEGER PRIMARY KEY CHECK (sequence > 0),
  taken_at TEXT NOT NULL,
  digest TEXT NOT NULL,
  document TEXT NOT NULL
) STRICT;
CREATE TRIGGER audit_checkpoints_no_update BEFORE UPDATE ON audit_checkpoints
BEGIN SELECT RAISE(ABORT, 'ASYNCJOB_ERR_APPEND_ONLY: audit_checkpoints is append-only; UPDATE refused'); END;
CREATE TRIGGER audit_checkpoints_no_delete BEFORE DELETE ON audit_checkpoints
BEGIN SELECT RAISE(ABORT, 'ASYNCJOB_ERR_APPEND_ONLY: audit_checkpoints is append-only; DELETE refused'); END;
`,
  },
];
