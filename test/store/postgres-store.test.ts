import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/adapters/store/postgres-driver';
import { openPostgresStore, type PostgresOperationStore } from '../../src/adapters/store/postgres-store';
import { snapshot, storyEntries } from './fixtures';
import { operationStoreContract, type StoreHarness } from './operation-store.contract';

const url = process.env.ASYNCJOB_TEST_PG_URL;

/** Every test gets its own schema, dropped afterwards, so runs and files never see each other's rows. */
async function harness(): Promise<StoreHarness & { schema: string }> {
  const schema = `asyncjob_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const store = await openPostgresStore({ connectionString: url!, schema, maxConnections: 4 });
  const opened = [store];
  const raw = new Client({ connectionString: url });
  await raw.connect();
  await raw.query(`SET search_path TO "${schema}"`);
  return {
    schema,
    store,
    async open(options = {}) {
      const s = await openPostgresStore({ ...options, connectionString: url!, schema, maxConnections: 4 });
      opened.push(s);
      return s;
    },
    async sql(statement) {
      await raw.query(statement);
    },
    async dropAppendOnlyTriggers() {
      for (const t of ['journal_no_update', 'journal_no_delete', 'journal_no_truncate'])
        await raw.query(`DROP TRIGGER ${t} ON journal`);
      for (const t of ['artifacts_no_update', 'artifacts_no_delete', 'artifacts_no_truncate'])
        await raw.query(`DROP TRIGGER ${t} ON artifacts`);
    },
    async cleanup() {
      await Promise.all(opened.map((s) => s.close()));
      await raw.query(`DROP SCHEMA "${schema}" CASCADE`);
      await raw.end();
    },
  };
}

const title = url
  ? 'PostgreSQL store'
  : 'PostgreSQL store: SKIPPED because ASYNCJOB_TEST_PG_URL is unset (start PostgreSQL and export ASYNCJOB_TEST_PG_URL=postgres://... to run it; CI always sets it)';

describe.skipIf(!url)(title, () => {
  operationStoreContract('PostgreSQL', harness);

  it("a role that may only read (an agent's, an auditor's) opens a migrated store and reads it; it writes nothing", async () => {
    const h = await harness();
    const role = `asyncjob_reader_${randomBytes(4).toString('hex')}`;
    const raw = new Client({ connectionString: url });
    await raw.connect();
    try {
      const [first, second] = storyEntries('op-read');
      await h.store.append(first!);
      await raw.query(`CREATE ROLE ${role} LOGIN`);
      await raw.query(`GRANT USAGE ON SCHEMA "${h.schema}" TO ${role}`);
      await raw.query(`GRANT SELECT ON ALL TABLES IN SCHEMA "${h.schema}" TO ${role}`);
      const asReader = new URL(url!);
      asReader.username = role;
      asReader.password = '';
      const reader = await openPostgresStore({
        connectionString: asReader.toString(),
        schema: h.schema,
        maxConnections: 1,
      });
      try {
        expect((await reader.entries('op-read')).map((e) => e.entry.sequence)).toEqual([1]);
        await expect(reader.append(second!)).rejects.toThrow(/permission denied/);
      } finally {
        await reader.close();
      }
    } finally {
      await raw.query(`DROP OWNED BY ${role}`);
      await raw.query(`DROP ROLE ${role}`);
      await raw.end();
      await h.cleanup();
    }
  });

  it("W1: a snapshot's provider job IDs are stored as a JSONB array, not as text", async () => {
    const h = await harness();
    const raw = new Client({ connectionString: url });
    await raw.connect();
    try {
      await h.store.putOperation(snapshot('op-jsonb', { remoteJobIds: ['job_1', 'job_2'] }));
      const stored = await raw.query(
        `SELECT jsonb_typeof(remote_job_ids) AS type, remote_job_ids FROM "${h.schema}".operations WHERE operation_id = 'op-jsonb'`,
      );
      expect(stored.rows).toEqual([{ type: 'array', remote_job_ids: ['job_1', 'job_2'] }]);
    } finally {
      await raw.end();
      await h.cleanup();
    }
  });

  it('M3: concurrent appenders on one operation never produce a duplicate or a gap', async () => {
    const h = await harness();
    try {
      const writers = await Promise.all([h.open(), h.open(), h.open()]);
      const template = storyEntries('op-race')[3]!;
      await h.store.append(storyEntries('op-race')[0]!);
      const appendNext = async (writer: (typeof writers)[number], n: number) => {
        for (let done = 0; done < n;) {
          const { lastSequence } = await writer.chainHead('op-race');
          const entry = { ...template, sequence: lastSequence + 1, actor: `writer-${writers.indexOf(writer)}-${done}` };
          try {
            await writer.append(entry);
            done += 1;
          } catch (err) {
            if ((err as { code?: string }).code !== 'ASYNCJOB_ERR_JOURNAL_CONFLICT') throw err;
          }
        }
      };
      await Promise.all(writers.map((w) => appendNext(w, 15)));
      const entries = await h.store.entries('op-race');
      expect(entries.map((e) => e.entry.sequence)).toEqual(Array.from({ length: 46 }, (_, i) => i + 1));
      expect(new Set(entries.map((e) => e.entry.actor)).size).toBe(46);
      expect((await h.store.verifyChains()).breaks).toEqual([]);
    } finally {
      await h.cleanup();
    }
  });
});

describe.skipIf(!url)('PostgreSQL driver: a connection lost inside a transaction', () => {
  it('fails that transaction, does not end the process, and the next transaction runs on a new connection', async () => {
    const driver = new PostgresDriver({ connectionString: url!, maxConnections: 1 });
    const admin = new Client({ connectionString: url });
    await admin.connect();
    try {
      const lost = driver.transaction('write', async (session) => {
        const { rows } = await session.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        const pid = rows[0]!.pid;
        // Terminated while the transaction is between statements, as a PostgreSQL restart does.
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        await expect
          .poll(async () => (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount)
          .toBe(0);
        // The FATAL message is already sent: this lets it reach the idle socket (the 'error' event that
        // crashed the process before), then the next statement fails.
        await new Promise((resolve) => setTimeout(resolve, 100));
        await session.query('SELECT 1');
      });
      await expect(lost).rejects.toThrow();
      // One connection in the pool: the broken one was destroyed, so this runs on a fresh one.
      const { rows } = await driver.query<{ answer: number }>('SELECT 42 AS answer');
      expect(rows).toEqual([{ answer: 42 }]);
    } finally {
      await admin.end();
      await driver.close();
    }
  });
});

describe.skipIf(!url)('PostgreSQL: loop wakes to every worker sharing the store', () => {
  /** The notices `store` receives, and the errors it reports, until `stop`. */
  async function listening(store: PostgresOperationStore) {
    const notices: unknown[] = [];
    const errors: string[] = [];
    const stop = await store.listenForLoopWakes(
      (notice) => notices.push(notice),
      (err) => errors.push(err.message),
    );
    return { notices, errors, stop };
  }

  async function until(check: () => boolean): Promise<void> {
    for (const end = Date.now() + 10_000; !check();) {
      if (Date.now() > end) throw new Error('nothing arrived within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('P4: a wake published by one store reaches every listener on its schema, none on another; a malformed notice is reported, never delivered', async () => {
    const h = await harness();
    const other = await harness();
    try {
      const sender = (await h.open()) as PostgresOperationStore;
      const here = await listening((await h.open()) as PostgresOperationStore);
      const elsewhere = await listening(other.store as PostgresOperationStore);
      await sender.publishLoopWake({ operationId: 'op-wake-1', origin: 'process-a' });
      await until(() => here.notices.length === 1);
      expect(here.notices).toEqual([{ operationId: 'op-wake-1', origin: 'process-a' }]);

      const raw = new Client({ connectionString: url });
      await raw.connect();
      await raw.query(`SET search_path TO "${h.schema}"`);
      await raw.query(`SELECT pg_notify('asyncjob_loop_wake', '{"operationId": "../x", "origin": "p"}')`);
      await raw.end();
      await until(() => here.errors.length === 1);
      expect(here.errors[0]).toContain('not one');
      // The other schema's listener got the notices too (a channel is the database's) and ignored them.
      await sender.publishLoopWake({ operationId: 'op-wake-2', origin: 'process-a' });
      await until(() => here.notices.length === 2);
      expect(elsewhere.notices).toEqual([]);
      await here.stop();
      await elsewhere.stop();
      await sender.publishLoopWake({ operationId: 'op-wake-3', origin: 'process-a' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(here.notices).toHaveLength(2);
    } finally {
      await h.cleanup();
      await other.cleanup();
    }
  });

  it('P4: a listening connection lost (terminated by the server) is reported and made again; later wakes arrive', async () => {
    const h = await harness();
    try {
      const here = await listening((await h.open()) as PostgresOperationStore);
      const raw = new Client({ connectionString: url });
      await raw.connect();
      const { rowCount } = await raw.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [`asyncjob loop wakes ${h.schema}`],
      );
      expect(rowCount).toBe(1);
      await raw.end();
      await until(() => here.errors.length >= 1);
      const sender = (await h.open()) as PostgresOperationStore;
      // Made again after about 1 s: published until one arrives.
      await until(() => {
        void sender.publishLoopWake({ operationId: 'op-after-loss', origin: 'process-b' });
        return here.notices.length > 0;
      });
      expect(here.notices[0]).toEqual({ operationId: 'op-after-loss', origin: 'process-b' });
      await here.stop();
    } finally {
      await h.cleanup();
    }
  });
});
