/**
 * A worker process for the concurrency test: opens the SQLite store, waits for the start signal (a file), then
 * appends `count` entries to one operation, each at the next free sequence, retrying on a conflict (another
 * process took that sequence first). Prints `{ appended, conflicts }` as JSON.
 */
import { existsSync } from 'node:fs';
import { openSqliteStore } from '../../../src/adapters/store/sqlite-store';
import { hasCode } from '../../../src/core/errors';

async function main(): Promise<void> {
  const [path, goFile, writer, countText] = process.argv.slice(2);
  const count = Number(countText);
  const store = await openSqliteStore({ path: path!, busyTimeoutMs: 30_000 });
  process.stdout.write('ready\n');
  while (!existsSync(goFile!)) await new Promise((resolve) => setTimeout(resolve, 5));
  let conflicts = 0;
  for (let appended = 0; appended < count;) {
    const { lastSequence } = await store.chainHead('op-shared');
    try {
      await store.append({
        operationId: 'op-shared',
        sequence: lastSequence + 1,
        at: new Date().toISOString(),
        actor: `${writer}-${appended}`,
        body: { kind: 'observation', action: 'status', transport: 'response', httpStatus: 200, remoteState: 'running' },
      });
      appended += 1;
    } catch (err) {
      if (!hasCode(err, 'ASYNCJOB_ERR_JOURNAL_CONFLICT')) throw err;
      conflicts += 1;
    }
  }
  await store.close();
  process.stdout.write(`${JSON.stringify({ appended: count, conflicts })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
