import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { describe } from 'vitest';
import { APPEND_ONLY_TABLES } from '../../src/adapters/store/audit-source';
import { openPostgresStore } from '../../src/adapters/store/postgres-store';
import { POSTGRES_DIALECT } from '../../src/adapters/store/sql-dialect';
import { generativeTamper } from './tamper-generative.contract';
import { tamperSuite, type TamperHarness } from './tamper.contract';

const url = process.env.ASYNCJOB_TEST_PG_URL;

/** `?` placeholders as PostgreSQL's `$1, $2, ...`. */
const numbered = (statement: string): string => {
  let n = 0;
  return statement.replace(/\?/g, () => `$${++n}`);
};

/** Every test gets its own schema (the CLI reaches it through the connection string's search_path), dropped afterwards. */
async function harness(): Promise<TamperHarness> {
  const schema = `asyncjob_tamper_${process.pid}_${randomBytes(4).toString('hex')}`;
  await (await openPostgresStore({ connectionString: url!, schema, maxConnections: 2 })).close();
  const raw = new Client({ connectionString: url });
  await raw.connect();
  await raw.query(`SET search_path TO "${schema}"`);
  const location = `${url}${url!.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return {
    location,
    open: (options = {}) => openPostgresStore({ ...options, connectionString: url!, schema, maxConnections: 2 }),
    async sql(statement) {
      await raw.query(statement);
    },
    async dropGuards() {
      for (const table of ['journal', 'artifacts', 'audit_checkpoints']) {
        for (const op of ['update', 'delete', 'truncate'])
          await raw.query(`DROP TRIGGER IF EXISTS ${table}_no_${op} ON ${table}`);
      }
    },
    async sqlUnchecked(statement, params = []) {
      await raw.query('SET session_replication_role = replica');
      try {
        await raw.query(numbered(statement), [...params]);
      } finally {
        await raw.query('SET session_replication_role = DEFAULT');
      }
    },
    async rows(statement, params = []) {
      return (await raw.query(numbered(statement), [...params])).rows as Record<string, unknown>[];
    },
    async restoreGuards() {
      for (const table of APPEND_ONLY_TABLES) await raw.query(POSTGRES_DIALECT.appendOnly(table));
    },
    async cleanup() {
      await raw.query(`DROP SCHEMA "${schema}" CASCADE`);
      await raw.end();
    },
  };
}

const title = url
  ? 'PostgreSQL'
  : 'PostgreSQL: SKIPPED because ASYNCJOB_TEST_PG_URL is unset (eval "$(bash scripts/postgres-for-tests.sh start)" to run it; CI always sets it)';

describe.skipIf(!url)(title, () => {
  tamperSuite('PostgreSQL', harness);
  generativeTamper('PostgreSQL', harness);
});
