/**
 * Figure 6: one provider step's store writes, as the worker makes them, at 1,000,000 journal entries already
 * stored (100,000 with `--quick`), on SQLite and on PostgreSQL (when `ASYNCJOB_TEST_PG_URL` is set).
 *
 * A step is what `pollStatus` (`src/activities/poll-status.ts`) does to the store for a status read that says
 * "still running": the activity's first read checks `alreadyRecorded` (a chain-head read), each later read of its
 * loop stores its reservation first (`putReservation`, one write transaction); then `commitStep` (the step's
 * entries and the operation's snapshot in one transaction, the chain head read again inside it). Each timed
 * operation gets four reads, one activity's first and three of its loop. The store is opened with `openStore`, as
 * the worker opens it, with an HMAC chain key and forbidden values (the production configuration: the worker
 * signs the chain when `ASYNCJOB_AUDIT_HMAC_KEY` is set). SQLite checkpoints as the product does (a thread of the
 * store's own); for comparison, the same steps on other operations with SQLite's automatic checkpoint inside
 * commits (`inCommitCheckpoints`).
 *
 * The fill (not timed): operations of 100 entries each, every one a copy of one operation the product's core ran
 * (intent, create, status reads of a running job interpreted by the rest preset's adapter) under its own random
 * operation ID, job ID and times, with real HMAC chain hashes, its snapshot and its job link, so a filled chain
 * verifies. Bulk SQL: SQLite one transaction of prepared statements, PostgreSQL multi-row INSERT from JSON.
 * The timed steps continue filled operations picked at random (their next status reads), so they land where
 * production's would: anywhere in the journal's key space, at the newest times.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createProviderRegistry } from '../../../src/adapters/providers/registry';
import { chainKeyOf } from '../../../src/adapters/store/chain';
import { round } from '../../lib/stats';
import { postgresEngine, sqliteEngine, type Keys } from './engines';
import { marked } from './filled-rows';
import { measureEngine, type Model } from './measure-engine';
import type { SqliteStoreResult, StoreEngineResult, StoreResult } from './result';
import { SCALES, TARGET_P99_MS, type Scale } from './scale';
import { filledOperations, PROVIDER, PROVIDER_URL, templateOperation } from './template';
import { checkFill } from './validity';

export type { StoreEngineResult, StoreResult } from './result';

/** PostgreSQL's figure, in a schema of its own that is dropped afterwards. */
async function postgresql(
  url: string,
  scale: Scale,
  model: Model,
  keys: Keys,
  log: (line: string) => void,
): Promise<StoreEngineResult> {
  const schema = `asyncjob_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  const raw = new Client({ connectionString: url });
  await raw.connect();
  try {
    return await measureEngine(postgresEngine(url, raw, schema, keys), scale, model, log);
  } finally {
    await raw.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    // Written now, not by the checkpointer over the next minutes, while figure 1 measures on the same disk.
    await raw.query('CHECKPOINT').catch(() => undefined);
    await raw.end();
  }
}

/** One engine's figure in a log line (SQLite: with its checkpointer and the comparison run). */
function summary(e: StoreEngineResult): string {
  const lines = [
    `  ${e.engine}: step p50 / p99 / max ${e.stepP50Ms} / ${e.stepP99Ms} / ${e.stepMaxMs} ms at ${e.fill.journalEntries} entries; ` +
      `${e.sequentialStepsPerSecond}/s one at a time, ${e.concurrentStepsPerSecond}/s with ${e.concurrentOperations} side by side ` +
      `(p99 ${e.concurrentStepP99Ms} ms); ${round(e.databaseBytes / 2 ** 20, 1)} MiB`,
  ];
  const w = e.walCheckpointer;
  if (w)
    lines.push(
      `  ${e.engine}: checkpointer ${w.checkpointer}: ${w.passiveCheckpoints} PASSIVE, ${w.turns} turns (${w.restarts} RESTART), ` +
        `WAL at most ${w.walFramesMax} pages; ${w.stepsWithTurn.steps} timed steps waited for a turn (median ${w.stepsWithTurn.stepP50Ms} ms)`,
    );
  const c = e.inCommitCheckpoints;
  if (c)
    lines.push(
      `  ${e.engine}, checkpoints in commits (comparison): step p50 / p99 / max ${c.stepP50Ms} / ${c.stepP99Ms} / ${c.stepMaxMs} ms; ` +
        `${c.checkpointingSteps.steps} of ${c.timedSteps} steps checkpointed (median ${c.checkpointingSteps.stepP50Ms} ms)`,
    );
  return lines.join('\n');
}

/** Measures figure 6. */
export async function measureStore(root: string, quick: boolean, log: (line: string) => void): Promise<StoreResult> {
  const scale = SCALES[quick ? 'quick' : 'full'];
  const secret = randomBytes(32).toString('base64url');
  const keys: Keys = {
    key: chainKeyOf(secret)!,
    forbiddenValues: [secret, `bench-provider-credential-${randomBytes(12).toString('hex')}`],
  };
  const registry = await createProviderRegistry({
    providers: [{ name: PROVIDER, path: 'rest' }],
    baseUrls: { [PROVIDER]: PROVIDER_URL },
    env: {
      ASYNCJOB_SIMULATOR_TOKEN: keys.forbiddenValues[1],
      ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: 'bench-webhook-secret',
    },
  });
  try {
    const provider = registry.get(PROVIDER);
    const template = templateOperation(provider);
    const model: Model = { provider, template, rows: marked(template) };
    checkFill(template, filledOperations(1)[0]!, keys.key);
    const s = await measureEngine(sqliteEngine(root, keys), scale, model, log);
    const sqlite: SqliteStoreResult = {
      ...s,
      engine: 'sqlite',
      targetP99Ms: TARGET_P99_MS,
      met: s.stepP99Ms <= TARGET_P99_MS,
    };
    log(summary(sqlite));
    const url = process.env.ASYNCJOB_TEST_PG_URL;
    if (!url) return { sqlite, postgresql: { skipped: 'ASYNCJOB_TEST_PG_URL is not set' } };
    try {
      const p = await postgresql(url, scale, model, keys, log);
      log(summary(p));
      return { sqlite, postgresql: p };
    } catch (err) {
      // A missing PostgreSQL must not cost the other figures: say why it is absent.
      const reason = `PostgreSQL failed: ${err instanceof Error ? err.message : String(err)}`;
      log(`  ${reason}`);
      return { sqlite, postgresql: { skipped: reason } };
    }
  } finally {
    await registry.close();
  }
}
