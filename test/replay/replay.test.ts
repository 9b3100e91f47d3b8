/**
 * Determinism guard: the histories recorded from real runs (`test/histories/**.json`) must replay against the
 * current workflow code. A change that reorders or drops commands fails here. The top folder holds the current
 * code's recordings (`test/workflows/record-histories.test.ts`); each earlier generation is kept in a folder of its
 * own (`before-message-wake/`, `before-retry-waits/`, `before-journalled-joins/`, `before-intent-with-lookup/`,
 * `before-create-reads-on/`) and replayed too
 * (`src/workflows/README.md`).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { historyFromFile } from '../../src/replay/history-file';
import { WORKFLOW_BUNDLER_OPTIONS, workflowsPath } from '../../src/worker';

const dir = path.join(__dirname, '..', 'histories');

describe('replay of recorded histories (determinism)', () => {
  it('replays every recorded history without a nondeterminism error', async () => {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // Installed by another file in this process.
    }
    const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.json')).sort();
    expect(files.length).toBeGreaterThanOrEqual(6);
    const histories = await Promise.all(
      files.map(async (file) => {
        // Replayed under the recorded workflow ID: the workflow checks that it is the operation ID.
        const read = historyFromFile(file, await readFile(path.join(dir, file), 'utf8'));
        if ('problem' in read) throw new Error(read.problem);
        return { workflowId: read.workflowId, file, history: read.history };
      }),
    );
    // The current recordings are of the current code: store calls as local activities, and a job done within 2 s
    // of its create is read and collected by the create's own activity; a longer one goes on in the status loop.
    const activityTypes = (file: string) =>
      histories
        .find((h) => h.file === file)!
        .history.events!.flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    expect(activityTypes('happy-rest.json')).toEqual(['createJob']);
    expect(activityTypes('escalate-extend.json')).toEqual(['createJob', 'pollStatus']);
    for (const name of ['readStatus', 'describeProvider', 'recordIntent', 'appendJournal', 'collectResult'])
      expect(activityTypes('happy-rest.json')).not.toContain(name);
    // The intent is recorded by the provider lookup: one local-activity marker before the create.
    const beforeCreate = histories
      .find((h) => h.file === 'happy-rest.json')!
      .history.events!.slice(0, 6)
      .map(
        (event) =>
          event.markerRecordedEventAttributes?.markerName ??
          event.activityTaskScheduledEventAttributes?.activityType?.name,
      );
    expect(beforeCreate.filter((name) => name !== undefined)).toEqual(['core_local_activity', 'createJob']);
    // One of them waits as retries of the status activity: its reads are attempts after the first.
    const attempts = histories
      .find((h) => h.file === 'retry-waits-rest.json')!
      .history.events!.flatMap((event) => event.activityTaskStartedEventAttributes?.attempt ?? []);
    expect(Math.max(...attempts)).toBeGreaterThan(1);
    const noop = () => undefined;
    const bundle = await bundleWorkflowCode({
      workflowsPath,
      ...WORKFLOW_BUNDLER_OPTIONS,
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
