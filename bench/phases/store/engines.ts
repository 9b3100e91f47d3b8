/** The two engines of figure 6: how each store is opened (as the worker opens it), filled, sized and configured. */
import { statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Client } from 'pg';
import type { ChainKey } from '../../../src/adapters/store/chain';
import { openStore } from '../../../src/adapters/store/open-store';
import type { OperationStore } from '../../../src/adapters/store/operation-store';
import { openSqliteStore, SQLITE_CHECKPOINTER_DEFAULTS } from '../../../src/adapters/store/sqlite-store';
import { fillPostgres, fillSqlite, PG_BATCH_OPERATIONS } from './fill';
import type { MarkedTemplate } from './filled-rows';
import type { StoreEngineResult } from './result';
import { ENTRIES_PER_OPERATION } from './scale';
import { walEpochOf } from './sqlite-checkpoints';
import type { FilledOperation } from './template';

const MIB = 2 ** 20;

/** How the product's SQLite store checkpoints its WAL, in words (its defaults, which the bench runs with). */
export const SQLITE_CHECKPOINTS_HOW =
  `a thread of the store's own, once the WAL file reaches ${SQLITE_CHECKPOINTER_DEFAULTS.startBytes / MIB} MiB: ` +
  `PASSIVE checkpoints every ${SQLITE_CHECKPOINTER_DEFAULTS.intervalMs} ms, and a RESTART checkpoint between two of the ` +
  `process's transactions when the WAL passes ${SQLITE_CHECKPOINTER_DEFAULTS.walLimitBytes / MIB} MiB; no commit checkpoints (wal_autocheckpoint = 0)`;

/** What differs per engine: how the store is opened (as the worker opens it), filled, sized and configured. */
export interface Engine {
  name: StoreEngineResult['engine'];
  open(): Promise<OperationStore>;
  fill(template: MarkedTemplate, ops: readonly FilledOperation[]): Promise<void>;
  fillHow: string;
  /**
   * SQLite: the store opened with `checkpointIntervalMs: 0` (SQLite's automatic checkpoint inside commits), for
   * the comparison run, and the WAL header's checkpoint sequence number (see `splitByMark`).
   */
  openInCommitCheckpoints?(): Promise<OperationStore>;
  walEpoch?(): number;
  sizeBytes(): Promise<number>;
  settings(): Promise<Record<string, string | number>>;
}

/** The worker's store options: the chain key and the process's secret values (the key among them). */
export interface Keys {
  key: ChainKey;
  forbiddenValues: string[];
}

export function sqliteEngine(root: string, keys: Keys): Engine {
  const file = path.join(root, 'store-cost.db');
  return {
    name: 'sqlite',
    open: () => openStore(`sqlite:${file}`, { hmacKey: keys.key.secret, forbiddenValues: keys.forbiddenValues }),
    fill: async (template, ops) => fillSqlite(file, template, ops, keys.key),
    openInCommitCheckpoints: () =>
      openSqliteStore({
        path: file,
        hmacKey: keys.key.secret,
        forbiddenValues: keys.forbiddenValues,
        checkpointIntervalMs: 0,
      }),
    fillHow:
      'one transaction of prepared INSERTs on a connection of its own (rollback journal in memory, synchronous OFF), then fsync',
    walEpoch: () => walEpochOf(file),
    sizeBytes: async () => statSync(file).size,
    settings: async () => {
      const db = new Database(file, { readonly: true });
      try {
        return {
          journalMode: String(db.pragma('journal_mode', { simple: true })),
          // Set by SqliteDriver on its own connection.
          synchronous: 'NORMAL',
          cacheSizeKiB: Math.abs(Number(db.pragma('cache_size', { simple: true }))),
          checkpoints: SQLITE_CHECKPOINTS_HOW,
          pageSize: Number(db.pragma('page_size', { simple: true })),
        };
      } finally {
        db.close();
      }
    },
  };
}

export function postgresEngine(url: string, raw: Client, schema: string, keys: Keys): Engine {
  return {
    name: 'postgresql',
    // The worker's pool (openStore: 10 connections by default).
    open: () => openStore(url, { schema, hmacKey: keys.key.secret, forbiddenValues: keys.forbiddenValues }),
    fill: async (template, ops) => {
      await raw.query(`SET search_path TO "${schema}"`);
      await fillPostgres(raw, template, ops, keys.key);
    },
    fillHow: `one transaction of INSERT ... SELECT from JSON arrays of ${PG_BATCH_OPERATIONS * ENTRIES_PER_OPERATION} rows, then VACUUM ANALYZE and CHECKPOINT`,
    sizeBytes: async () =>
      Number(
        (
          await raw.query(
            `SELECT sum(pg_total_relation_size(c.oid)) AS bytes FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
            [schema],
          )
        ).rows[0].bytes,
      ),
    settings: async () => {
      const show = async (name: string): Promise<string> => String((await raw.query(`SHOW ${name}`)).rows[0][name]);
      return {
        serverVersion: await show('server_version'),
        fsync: await show('fsync'),
        synchronousCommit: await show('synchronous_commit'),
        sharedBuffers: await show('shared_buffers'),
        poolSize: 10,
      };
    },
  };
}
