/** Provider steps for the WAL tests: an observation and the snapshot per commit, as a worker writes them. */
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteStore, type SqliteOperationStore } from '../../../src/adapters/store/sqlite-store';

/** Operations the steps go round, so a commit lands on pages the previous one did not write. */
const OPERATIONS = 50;

/** One WAL frame of a database with SQLite's default page size: the page and its 24-byte header. */
export const FRAME_BYTES = 4096 + 24;

/** The size of the store's WAL file, bytes (0 when there is none). */
export function walBytes(path: string): number {
  return existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0;
}

/**
 * Commits steps `from` to `from + count - 1`, one transaction each (`appendWithSnapshot`), round robin over
 * `OPERATIONS` operations named `${prefix}-N`; awaits `between` after each.
 */
export async function commitSteps(
  store: SqliteOperationStore,
  count: number,
  options: { from?: number; prefix?: string; between?: () => Promise<void> } = {},
): Promise<void> {
  const { from = 0, prefix = 'op', between } = options;
  for (let i = from; i < from + count; i++) {
    const operationId = `${prefix}-${i % OPERATIONS}`;
    const sequence = Math.floor(i / OPERATIONS) + 1;
    const at = new Date(Date.UTC(2026, 10, 29, 10) + i * 1_000).toISOString();
    await store.appendWithSnapshot(
      [
        {
          operationId,
          sequence,
          at,
          actor: 'worker:wal-test',
          body: {
            kind: 'observation',
            action: 'status',
            transport: 'response',
            httpStatus: 200,
            remoteState: 'running',
          },
        },
      ],
      {
        operationId,
        provider: 'acme',
        localState: 'observing',
        remoteJobIds: [],
        escalationReason: null,
        resultDeadlineAt: '2026-12-29T10:00:00.000Z',
        updatedAt: at,
        version: sequence,
        record: { statusRequestsUsed: sequence, notes: 'x'.repeat(1_500) },
      },
    );
    if (between) await between();
  }
}

/**
 * The WAL frames one step adds, measured: 200 steps on a store of their own in `dir` whose checkpointer is not
 * due, so none is copied out and the WAL holds every frame they wrote.
 */
export async function framesPerStep(dir: string): Promise<number> {
  const path = join(mkdtempSync(join(dir, 'frames-per-step-')), 'asyncjob.db');
  const store = await openSqliteStore({ path, checkpointIntervalMs: 3_600_000 });
  try {
    const before = walBytes(path);
    await commitSteps(store, 200, { prefix: 'calibration' });
    return (walBytes(path) - before) / FRAME_BYTES / 200;
  } finally {
    await store.close();
  }
}
