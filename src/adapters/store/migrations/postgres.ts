/**
 * PostgreSQL schema migrations, in order. Applied by `PostgresOperationStore.migrate()` inside one transaction
 * holding a transaction-scoped advisory lock, recorded in `schema_migrations`. Objects are created in the
 * connection's `search_path` schema. Published migrations are never edited: add a new one.
 */
import { type Migration } from './migration';

/** The PostgreSQL migrations. */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'operation record, hash-chained journal, artifacts, webhook events',
    sql: `
CREATE TABLE operations (
  operation_id TEXT PRIMARY KEY,
  provider TEXT,
  local_state TEXT,
  remote_job_ids JSONB NOT NULL DEFAULT '[]'::jsonb,
  escalation_reason TEXT,
  result_deadline_at_ms BIGINT,
  updated_at TEXT,
  version BIGINT NOT NULL DEFAULT 0,
  snapshot TEXT,
  last_sequence BIGINT NOT NULL DEFAULT 0,
  last_hash TEXT
);
CREATE INDEX operations_by_state ON operations (local_state, updated_at);
CREATE INDEX operations_by_escalation ON operations (escalation_reason) WHERE escalation_reason IS NOT NULL;
CREATE INDEX operations_by_deadline ON operations (result_deadline_at_ms) WHERE result_deadline_at_ms IS NOT NULL;

CREATE TABLE journal (
  operation_id TEXT NOT NULL REFERENCES operations (operation_id),
  sequence BIGINT NOT NULL CHECK (sequence > 0),
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
);
CREATE INDEX journal_by_kind ON journal (kind, at);
CREATE INDEX journal_by_remote_job ON journal (remote_job_id) WHERE remote_job_id IS NOT NULL;
CREATE INDEX journal_by_escalation ON journal (escalation_reason) WHERE escalation_reason IS NOT NULL;

CREATE TABLE operation_jobs (
  provider TEXT NOT NULL,
  remote_job_id TEXT NOT NULL,
  operation_id TEXT NOT NULL REFERENCES operations (operation_id),
  PRIMARY KEY (provider, remote_job_id, operation_id)
);

CREATE TABLE artifacts (
  operation_id TEXT NOT NULL,
  sequence BIGINT NOT NULL,
  at TEXT NOT NULL,
  location TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  size_bytes BIGINT NOT NULL,
  content_type TEXT,
  validation TEXT NOT NULL CHECK (validation IN ('valid', 'invalid', 'not_checked')),
  PRIMARY KEY (operation_id, sequence),
  FOREIGN KEY (operation_id, sequence) REFERENCES journal (operation_id, sequence)
);
CREATE INDEX artifacts_by_sha256 ON artifacts (sha256);

CREATE TABLE webhook_events (
  provider TEXT NOT NULL,
  event_id TEXT NOT NULL,
  received_at TEXT NOT NULL,
  operation_id TEXT,
  event_type TEXT,
  payload_sha256 TEXT,
  PRIMARY KEY (provider, event_id)
);

CREATE FUNCTION asyncjob_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  RAISE EXCEPTION 'ASYNCJOB_ERR_APPEND_ONLY: % is append-only; % refused', TG_TABLE_NAME, TG_OP;
END;
$fn$;
CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal FOR EACH ROW EXECUTE FUNCTION asyncjob_refuse_change();
CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal FOR EACH ROW EXECUTE FUNCTION asyncjob_refuse_change();
CREATE TRIGGER journal_no_truncate BEFORE TRUNCATE ON journal FOR EACH STATEMENT EXECUTE FUNCTION asyncjob_refuse_change();
CREATE TRIGGER artifacts_no_update BEFORE UPDATE ON artifacts FOR EACH ROW EXECUTE FUNCTION asyncjob_refuse_change();
CREATE TRIGGER artifacts_no_delete BEFORE DELETE ON artifacts FOR EACH ROW EXECUTE FUNCTION asyncjob_refuse_change();
CREATE TRIGGER artifacts_no_truncate BEFORE TRUNCATE ON artifacts FOR EACH STATEMENT EXECUTE FUNCTION asyncjob_refuse_change();
`,
  },
  {
    version: 2,
    name: 'provider sessions (V3): one serialised cookie jar per operation',
    sql: `
CREATE TABLE provider_sessions (
  operation_id TEXT PRIMARY KEY,
  jar TEXT NOT NULL CHECK (octet_length(jar) <= 65536),
  updated_at TEXT NOT NULL
);
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
  sequence BIGINT PRIMARY KEY CHECK (sequence > 0),
  taken_at TEXT NOT NULL,
  digest TEXT NOT NULL,
  document TEXT NOT NULL
);
CREATE TRIGGER audit_checkpoints_no_update BEFORE UPDATE ON audit_checkpoints FOR EACH ROW EXECUTE FUNCTION asyncjob_refuse_change();
CREATE TRIGGER audit_checkpoints_no_delete BEFORE DELETE ON audit_checkpoints FOR EACH ROW EXECUTE FUNCTION asyncjob_refuse_change();
CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints FOR EACH STATEMENT EXECUTE FUNCTION asyncjob_refuse_change();
`,
  },
];
