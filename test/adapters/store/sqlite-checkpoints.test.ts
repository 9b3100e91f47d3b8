/**
 * The SQLite store's WAL checkpoints: no commit runs one (SQLite's automatic checkpoint, inside the commit that
 * takes the WAL past 1,000 pages, is off); a thread of the store's own copies the WAL into the database file in
 * the background, and the WAL stays bounded however many commits come, in one process or two.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import {
  openSqliteStore,
  type SqliteOperationStore,
  type SqliteStoreOptions,
} from '../../../src/adapters/store/sqlite-store';
import { startStoreChild } from '../../store/workers/start';
import { commitSteps, FRAME_BYTES, framesPerStep, walBytes } from './wal-steps';

const root = mkdtempSync(join(tmpdir(), 'asyncjob-sqlite-wal-'));
let counter = 0;
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** SQLite's automatic checkpoint threshold, in pages (`wal_autocheckpoint` by default). */
const SQLITE_AUTOCHECKPOINT_PAGES = 1_000;

/**
 * When the database file was last written, and its size: a checkpoint writes pages into it, a commit does not.
 * (Not its bytes: opening and closing the file beside the store's connection would drop the process's locks.)
 */
const written = (file: string): string => {
  const stat = statSync(file, { bigint: true });
  return `${stat.mtimeNs}:${stat.size}`;
};

async function opened(options: SqliteStoreOptions): Promise<{ store: SqliteOperationStore; path: string }> {
  const path = join(root, `wal-${++counter}`, 'asyncjob.db');
  return { store: await openSqliteStore({ ...options, path }), path };
}

/** Polls `check` until it holds (the checkpointer runs on its own thread, at its own interval). */
async function eventually(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits for a checkpoint begun after the last commit to have copied the whole WAL into the database file. */
async function settled(store: SqliteOperationStore): Promise<void> {
  // The counters are the last checkpoint's: wait for one that began after this call.
  const begun = store.walStatus().passiveCheckpoints;
  await eventually(() => {
    const status = store.walStatus();
    return status.passiveCheckpoints > begun + 1 && status.walFramesCopied === status.walFrames;
  }, 'a checkpoint copied the whole WAL');
}

describe('SQLite store: WAL checkpoints off the commit path', () => {
  it('no commit checkpoints: with the checkpointer not yet due, commits past 1,000 WAL pages leave the database file untouched', async () => {
    const { store, path } = await opened({ checkpointIntervalMs: 3_600_000 });
    try {
      const before = written(path);
      await commitSteps(store, 400);
      expect(walBytes(path)).toBeGreaterThan(SQLITE_AUTOCHECKPOINT_PAGES * FRAME_BYTES);
      expect(written(path)).toBe(before);
      expect(store.walStatus()).toMatchObject({ checkpointer: 'running', passiveCheckpoints: 0 });
    } finally {
      await store.close();
    }
  });

  it('the checkpointer copies the WAL into the database file in the background, and the next commit starts the WAL again', async () => {
    const { store, path } = await opened({ checkpointIntervalMs: 20 });
    try {
      const before = written(path);
      await commitSteps(store, 400);
      const walWritten = walBytes(path);
      await eventually(() => written(path) !== before, 'the database file holds the commits');
      await settled(store);
      await commitSteps(store, 1, { from: 400 });
      await eventually(() => store.walStatus().walFrames < 50, 'the next commit wrote at the start of the WAL');
      // Restarted, not appended: the file did not grow past what the 400 commits had written.
      expect(walBytes(path)).toBe(walWritten);
      expect(store.walStatus()).toMatchObject({ checkpointer: 'running', errors: 0 });
      expect(store.walStatus().passiveCheckpoints).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare('SELECT count(*) FROM journal').pluck().get()).toBe(401);
    raw.close();
  });

  it('the WAL stays bounded under commits that never leave the checkpointer a quiet moment', async () => {
    const walLimitBytes = 256 * 1024;
    const { store, path } = await opened({ checkpointIntervalMs: 10, walLimitBytes });
    const commits = 3_000;
    const writtenBytes = commits * (await framesPerStep(root)) * FRAME_BYTES;
    let walBytesMax = 0;
    try {
      // As a worker's event loop turns between steps: the checkpointer's turn comes in between.
      await commitSteps(store, commits, {
        between: async () => {
          walBytesMax = Math.max(walBytesMax, walBytes(path));
          await new Promise((resolve) => setImmediate(resolve));
        },
      });
      const status = store.walStatus();
      expect(status).toMatchObject({ checkpointer: 'running', errors: 0 });
      expect(status.passiveCheckpoints).toBeGreaterThan(0);
      // Never started again, the WAL would hold every frame the commits wrote; it held a small part of them.
      expect(walBytesMax).toBeLessThan(writtenBytes / 4);
      expect(status.walFramesMax * FRAME_BYTES).toBeLessThan(writtenBytes / 4);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('past its limit, the WAL is started again after a turn between transactions; a reader in another connection only delays it', async () => {
    const walLimitBytes = 256 * 1024;
    const { store, path } = await opened({ checkpointIntervalMs: 10, walLimitBytes });
    const reader = new Database(path, { readonly: true });
    try {
      await commitSteps(store, 200);
      await settled(store);
      // A read snapshot taken now: no checkpoint may copy what is committed after it, so the WAL cannot start
      // again while it lasts, and the turn gives up instead of holding the process's writers.
      reader.prepare('BEGIN').run();
      reader.prepare('SELECT count(*) FROM journal').get();
      const before = store.walStatus();
      await commitSteps(store, 100, { from: 200 });
      await eventually(() => store.walStatus().turns > before.turns, 'a turn was taken');
      await commitSteps(store, 1, { from: 300 });
      expect(store.walStatus().restarts).toBe(before.restarts);
      reader.prepare('COMMIT').run();
      // Steps keep coming, as a worker's do: a turn finishes the checkpoint, or a checkpoint between commits does.
      for (let from = 301; ; from++) {
        await commitSteps(store, 1, { from });
        const status = store.walStatus();
        if (status.restarts > before.restarts || status.walFrames * FRAME_BYTES < walLimitBytes) break;
        if (from > 2_000) throw new Error('the WAL did not start again');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(store.walStatus()).toMatchObject({ checkpointer: 'running', errors: 0 });
    } finally {
      if (reader.inTransaction) reader.prepare('COMMIT').run();
      reader.close();
      await store.close();
    }
  });

  it('a store that writes little starts no checkpointer thread: its WAL stays under 1 MiB', async () => {
    const { store, path } = await opened({ checkpointIntervalMs: 10 });
    try {
      await commitSteps(store, 20);
      expect(walBytes(path)).toBeLessThan(2 ** 20);
      expect(store.walStatus()).toMatchObject({ checkpointer: 'waiting', passiveCheckpoints: 0 });
    } finally {
      await store.close();
    }
    expect(store.walStatus().checkpointer).toBe('off');
  });

  it('reports no checkpointer when the interval is 0: SQLite then checkpoints in its commits, as by default', async () => {
    const { store, path } = await opened({ checkpointIntervalMs: 0 });
    try {
      const before = written(path);
      await commitSteps(store, 400);
      expect(written(path)).not.toBe(before);
      expect(store.walStatus()).toMatchObject({ checkpointer: 'off', passiveCheckpoints: 0 });
    } finally {
      await store.close();
    }
  });
});

interface WriterResult {
  committed: number;
  status: ReturnType<SqliteOperationStore['walStatus']>;
  walBytesMax: number;
}

function startWriter(path: string, goFile: string, name: string, steps: number) {
  const script = join(__dirname, 'workers', 'checkpoint-writer.ts');
  return startStoreChild<WriterResult>(script, [path, goFile, name, String(steps)], `writer ${name}`);
}

describe('SQLite store: two processes on one file, each with its checkpointer (M3)', () => {
  it('M3: both commit and checkpoint; every chain is whole and the WAL was started again while they wrote', async () => {
    const path = join(root, 'shared', 'asyncjob.db');
    const goFile = join(root, 'shared-go');
    const steps = 600;
    const writtenBytes = 2 * steps * (await framesPerStep(root)) * FRAME_BYTES;
    const writers = [startWriter(path, goFile, 'a', steps), startWriter(path, goFile, 'b', steps)];
    await Promise.all(writers.map((w) => w.ready));
    writeFileSync(goFile, 'go');
    const results = await Promise.all(writers.map((w) => w.done));
    expect(results.map((r) => r.committed)).toEqual([steps, steps]);
    for (const result of results) expect(result.status).toMatchObject({ checkpointer: 'running', errors: 0 });
    expect(results.reduce((sum, r) => sum + r.status.passiveCheckpoints, 0)).toBeGreaterThan(0);
    // The WAL was started again while they wrote: it never held everything both wrote. How soon depends on when
    // the checkpointer threads get the CPU, which a busy machine delays by any amount, so no tighter bound holds.
    expect(Math.max(...results.map((r) => r.walBytesMax))).toBeLessThan(writtenBytes);

    const store = await openSqliteStore({ path, fileMustExist: true });
    try {
      const verified = await store.verifyChains();
      expect(verified.breaks).toEqual([]);
      expect(verified.entriesChecked).toBe(2 * steps);
    } finally {
      await store.close();
    }
  }, 120_000);
});
