/**
 * A worker process for the two-process WAL test: opens the SQLite store with a short checkpoint interval and a
 * small WAL limit, waits for the start signal (a file), commits `steps` provider steps to operations of its own,
 * yielding to its event loop between them, and prints `{ committed, status, walBytesMax }` as JSON.
 */
import { existsSync } from 'node:fs';
import { openSqliteStore } from '../../../../src/adapters/store/sqlite-store';
import { commitSteps, walBytes } from '../wal-steps';

async function main(): Promise<void> {
  const [path, goFile, name, stepsText] = process.argv.slice(2);
  const steps = Number(stepsText);
  const store = await openSqliteStore({
    path: path!,
    busyTimeoutMs: 30_000,
    checkpointIntervalMs: 10,
    walLimitBytes: 256 * 1024,
  });
  process.stdout.write('ready\n');
  while (!existsSync(goFile!)) await new Promise((resolve) => setTimeout(resolve, 5));
  let walBytesMax = 0;
  await commitSteps(store, steps, {
    prefix: name,
    between: async () => {
      walBytesMax = Math.max(walBytesMax, walBytes(path!));
      await new Promise((resolve) => setImmediate(resolve));
    },
  });
  const status = store.walStatus();
  await store.close();
  process.stdout.write(`${JSON.stringify({ committed: steps, status, walBytesMax })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
