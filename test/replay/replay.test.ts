/**
 * Determinism guard: the histories recorded from real runs (`test/histories/*.json`) must replay against the
 * current workflow code. A change that reorders or drops commands fails here (use `patched()` for such changes).
 * `v1-*.json` were recorded before the store calls became local activities, `v2-*.json` before status reads moved
 * into one looping activity (`pollStatus`, one `readStatus` activity per read then): operations running then must
 * still replay after an upgrade.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowsPath } from '../../src/worker';

const dir = path.join(__dirname, '..', 'histories');

describe('replay of recorded histories (determinism)', () => {
  it('replays every recorded history without a nondeterminism error', async () => {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // Installed by another file in this process.
    }
    const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
    expect(files.length).toBeGreaterThanOrEqual(6);
    const histories = await Promise.all(
      files.map(async (file) => {
        const history = historyFromJSON(JSON.parse(await readFile(path.join(dir, file), 'utf8')));
        // The workflow checks that its ID is the operation ID, so replay under the recorded one.
        const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
        const input = JSON.parse(Buffer.from(started ?? new Uint8Array()).toString('utf8')) as {
          request: { operationId: string };
        };
        return { workflowId: input.request.operationId, file, history };
      }),
    );
    // Each generation is really there: per-read activities in v2, the status loop in the current recordings.
    const activityTypes = (file: string) =>
      new Set(
        histories
          .filter((h) => h.file === file)
          .flatMap((h) => h.history.events ?? [])
          .flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []),
      );
    expect(activityTypes('v2-happy-rest.json')).toContain('readStatus');
    expect(activityTypes('happy-rest.json')).toContain('pollStatus');
    expect(activityTypes('happy-rest.json')).not.toContain('readStatus');
    const noop = () => undefined;
    const bundle = await bundleWorkflowCode({
      workflowsPath,
      logger: { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error },
    });
    const results: { workflowId: string; error?: unknown }[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, histories)) results.push(result);
    const byId = new Map(histories.map((h) => [h.workflowId, h.file]));
    expect(
      results.map((r) => ({ file: byId.get(r.workflowId), error: r.error ? String(r.error) : undefined })),
    ).toEqual(histories.map((h) => ({ file: h.file, error: undefined })));
  }, 60_000);
});
