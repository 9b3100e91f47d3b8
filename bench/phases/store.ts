/**
 * Figure 6: the store's append path at 100,000 stored observations, SQLite and PostgreSQL (when
 * `ASYNCJOB_TEST_PG_URL` is set). The 100,000 rows are bulk-inserted with SQL (the fill is not what is measured),
 * then real appends through the `OperationStore` are timed one by one (cost of one append: median and p99), and
 * appends per second are measured both one at a time and with 16 operations appending side by side.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import type { OperationStore } from '../../src/adapters/store/operation-store';
import { openPostgresStore } from '../../src/adapters/store/postgres-store';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import type { JournalEntry } from '../../src/core/journal';
import { median, nowMs, percentile, round } from '../lib/stats';

const FILL = 100_000;

/** One engine's figures. */
export interface StoreEngineResult {
  engine: 'sqlite' | 'postgresql';
  storedObservations: number;
  /** One append, one at a time, ms. */
  appendMedianMs: number;
  appendP99Ms: number;
  /** Appends per second, one at a time (one operation). */
  sequentialAppendsPerSecond: number;
  /** Appends per second with 16 operations appending concurrently. */
  concurrentAppendsPerSecond: number;
  timedAppends: number;
}

/** Figure 6. */
export interface StoreResult {
  sqlite: StoreEngineResult;
  postgresql: StoreEngineResult | { skipped: string };
}

/** An observation entry like the ones the status activity appends. */
export function observation(operationId: string, sequence: number): JournalEntry {
  return {
    operationId,
    sequence,
    at: '2026-11-29T10:20:31.000Z',
    actor: 'worker:bench',
    body: {
      kind: 'observation',
      action: 'status',
      transport: 'response',
      httpStatus: 503,
      headers: { 'retry-after': '120' },
      nextPollAt: '2026-11-29T10:22:31.000Z',
      delaySource: 'provider_retry_after',
      statusRequestsUsed: sequence,
      statusRequestsAllowed: 100_000,
    },
  };
}

async function timeAppends(
  store: OperationStore,
  engine: StoreEngineResult['engine'],
  quick: boolean,
): Promise<StoreEngineResult> {
  const timed = quick ? 300 : 1_000;
  const costs: number[] = [];
  const t0 = nowMs();
  for (let sequence = 1; sequence <= timed; sequence++) {
    const started = nowMs();
    await store.append(observation('op-measured', sequence));
    costs.push(nowMs() - started);
  }
  const sequentialMs = nowMs() - t0;
  const lanes = 16;
  const perLane = quick ? 50 : 150;
  const c0 = nowMs();
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let sequence = 1; sequence <= perLane; sequence++)
        await store.append(observation(`op-lane-${lane}`, sequence));
    }),
  );
  const concurrentMs = nowMs() - c0;
  const breaks = (await store.verifyChains({ operationId: 'op-measured' })).breaks;
  if (breaks.length > 0) throw new Error(`${engine}: the measured chain is broken: ${JSON.stringify(breaks[0])}`);
  return {
    engine,
    storedObservations: FILL,
    appendMedianMs: round(median(costs), 3),
    appendP99Ms: round(percentile(costs, 99), 3),
    sequentialAppendsPerSecond: Math.round((timed / sequentialMs) * 1000),
    concurrentAppendsPerSecond: Math.round(((lanes * perLane) / concurrentMs) * 1000),
    timedAppends: timed,
  };
}

async function sqlite(root: string, quick: boolean): Promise<StoreEngineResult> {
  const file = path.join(root, 'store-cost.db');
  const store = await openSqliteStore({ path: file });
  const raw = new Database(file);
  raw.exec(`
    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${FILL / 100 - 1})
    INSERT INTO operations (operation_id, provider, last_sequence, last_hash) SELECT 'bulk-' || i, 'acme', 100, 'sha256:' || i FROM n;
  `);
  raw
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${FILL - 1})
       INSERT INTO journal (operation_id, sequence, at, actor, kind, entry, prev_hash, hash, http_status, delay_source)
       SELECT 'bulk-' || (i / 100), (i % 100) + 1, '2026-11-29T10:20:31.000Z', 'worker:bench', 'observation', ?,
              'sha256:prev' || i, 'sha256:' || i, 503, 'provider_retry_after' FROM n`,
    )
    .run(JSON.stringify(observation('bulk', 1)));
  const count = raw.prepare("SELECT count(*) FROM journal WHERE kind = 'observation'").pluck().get() as number;
  raw.close();
  if (count !== FILL) throw new Error(`sqlite fill: ${count} observations, expected ${FILL}`);
  try {
    return await timeAppends(store, 'sqlite', quick);
  } finally {
    await store.close();
  }
}

async function postgresql(url: string, quick: boolean): Promise<StoreEngineResult> {
  const schema = `asyncjob_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  const store = await openPostgresStore({ connectionString: url, schema, maxConnections: 16 });
  const raw = new Client({ connectionString: url });
  await raw.connect();
  try {
    await raw.query(`SET search_path TO "${schema}"`);
    await raw.query(
      `INSERT INTO operations (operation_id, provider, last_sequence, last_hash)
       SELECT 'bulk-' || i, 'acme', 100, 'sha256:' || i FROM generate_series(0, ${FILL / 100 - 1}) AS i`,
    );
    await raw.query(
      `INSERT INTO journal (operation_id, sequence, at, actor, kind, entry, prev_hash, hash, http_status, delay_source)
       SELECT 'bulk-' || (i / 100), (i % 100) + 1, '2026-11-29T10:20:31.000Z', 'worker:bench', 'observation', $1,
              'sha256:prev' || i, 'sha256:' || i, 503, 'provider_retry_after' FROM generate_series(0, ${FILL - 1}) AS i`,
      [JSON.stringify(observation('bulk', 1))],
    );
    await raw.query('ANALYZE');
    const count = Number((await raw.query("SELECT count(*) AS n FROM journal WHERE kind = 'observation'")).rows[0].n);
    if (count !== FILL) throw new Error(`postgresql fill: ${count} observations, expected ${FILL}`);
    return await timeAppends(store, 'postgresql', quick);
  } finally {
    await store.close();
    await raw.query(`DROP SCHEMA "${schema}" CASCADE`);
    await raw.end();
  }
}

/** Measures figure 6. */
export async function measureStore(root: string, quick: boolean, log: (line: string) => void): Promise<StoreResult> {
  const s = await sqlite(root, quick);
  log(
    `  sqlite: append median ${s.appendMedianMs} ms, ${s.sequentialAppendsPerSecond}/s one at a time, ${s.concurrentAppendsPerSecond}/s concurrent`,
  );
  const url = process.env.ASYNCJOB_TEST_PG_URL;
  if (!url) return { sqlite: s, postgresql: { skipped: 'ASYNCJOB_TEST_PG_URL is not set' } };
  let p: StoreEngineResult;
  try {
    p = await postgresql(url, quick);
  } catch (err) {
    // A missing PostgreSQL must not cost the other figures: say why it is absent.
    const reason = `PostgreSQL failed: ${err instanceof Error ? err.message : String(err)}`;
    log(`  ${reason}`);
    return { sqlite: s, postgresql: { skipped: reason } };
  }
  log(
    `  postgresql: append median ${p.appendMedianMs} ms, ${p.sequentialAppendsPerSecond}/s one at a time, ${p.concurrentAppendsPerSecond}/s concurrent`,
  );
  return { sqlite: s, postgresql: p };
}
