/**
 * asyncjob's schema migrations, one list for both engines. Each migration is written once; only the fragments
 * that truly differ (column types, table options, triggers) come from the engine's {@link SqlDialect}, so both
 * engines' tables have the same columns under the same version numbers. Applied by `migrateSchema`
 * (`../sql-migrate.ts`) inside one write transaction, recorded in `schema_migrations`. A migration is never
 * edited once stores exist that it created (they must keep opening): a change is a new one.
 */
import { type SqlDialect } from '../sql-dialect';
import { type SchemaMigration } from './migration';

/** The ledger of applied migrations, created before any migration runs. */
export function migrationLedgerSql(d: SqlDialect): string {
  return `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at ${d.appliedAtColumn})`;
}

/** The migrations, in version order. */
export const SCHEMA_MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    name: 'operation record, signed hash-chained journal, artifacts, webhook events, provider sessions, audit checkpoints',
    sql: (d) => `
CREATE TABLE operations (
  operation_id TEXT PRIMARY KEY,
  provider TEXT,
  local_state TEXT,
  remote_job_ids ${d.json} NOT NULL DEFAULT ${d.emptyJsonList},
  escalation_reason TEXT,
  result_deadline_at_ms ${d.bigint},
  updated_at TEXT,
  version ${d.bigint} NOT NULL DEFAULT 0,
  snapshot TEXT,
  snapshot_hash TEXT,
  snapshot_key_id TEXT,
  last_sequence ${d.bigint} NOT NULL DEFAULT 0,
  last_hash TEXT
)${d.tableOptions};

CREATE TABLE journal (
  operation_id TEXT NOT NULL REFERENCES operations (operation_id),
  sequence ${d.bigint} NOT NULL CHECK (sequence > 0),
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
  key_id TEXT,
  PRIMARY KEY (operation_id, sequence)
)${d.keyedTableOptions};
CREATE INDEX journal_by_kind ON journal (kind, at);
CREATE INDEX journal_by_remote_job ON journal (remote_job_id) WHERE remote_job_id IS NOT NULL;
CREATE INDEX journal_by_escalation ON journal (escalation_reason) WHERE escalation_reason IS NOT NULL;

CREATE TABLE operation_jobs (
  provider TEXT NOT NULL,
  remote_job_id TEXT NOT NULL,
  operation_id TEXT NOT NULL REFERENCES operations (operation_id),
  PRIMARY KEY (provider, remote_job_id, operation_id)
)${d.keyedTableOptions};

CREATE TABLE artifacts (
  operation_id TEXT NOT NULL,
  sequence ${d.bigint} NOT NULL,
  at TEXT NOT NULL,
  location TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  size_bytes ${d.bigint} NOT NULL,
  content_type TEXT,
  validation TEXT NOT NULL CHECK (validation IN ('valid', 'invalid', 'not_checked')),
  PRIMARY KEY (operation_id, sequence),
  FOREIGN KEY (operation_id, sequence) REFERENCES journal (operation_id, sequence)
)${d.tableOptions};
CREATE INDEX artifacts_by_sha256 ON artifacts (sha256);

CREATE TABLE webhook_events (
  provider TEXT NOT NULL,
  event_id TEXT NOT NULL,
  received_at TEXT NOT NULL,
  operation_id TEXT,
  event_type TEXT,
  payload_sha256 TEXT,
  PRIMARY KEY (provider, event_id)
)${d.tableOptions};

CREATE TABLE provider_sessions (
  operation_id TEXT PRIMARY KEY,
  jar TEXT NOT NULL CHECK (${d.byteLength('jar')} <= 65536),
  updated_at TEXT NOT NULL
)${d.tableOptions};

CREATE TABLE audit_checkpoints (
  sequence ${d.bigint} PRIMARY KEY CHECK (sequence > 0),
  taken_at TEXT NOT NULL,
  digest TEXT NOT NULL,
  document TEXT NOT NULL
)${d.tableOptions};
${d.refuseChangeFunction}${d.appendOnly('journal')}${d.appendOnly('artifacts')}${d.appendOnly('audit_checkpoints')}`,
  },
  {
    version: 2,
    name: 'provider send slots: the next free send instant of each provider queue, shared by a fleet',
    // One row per provider task queue (the queue names the deployment and the provider, so two deployments'
    // providers of one name keep two rows). PostgreSQL hands out slots from it (`reserveProviderSend`); the
    // SQLite store, on one host, paces each process itself and leaves the table empty.
    sql: (d) => `
CREATE TABLE provider_send_slots (
  task_queue TEXT PRIMARY KEY,
  next_free_at_us ${d.bigint} NOT NULL
)${d.keyedTableOptions};`,
  },
];
