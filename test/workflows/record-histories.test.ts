/**
 * Records the histories the replay test checks (`test/histories/*.json`) from the current code, on the dev server the
 * integration project starts. Runs only when asked:
 * `ASYNCJOB_RECORD_HISTORIES=1 npx vitest run --project integration test/workflows/record-histories.test.ts`.
 * Re-record after every change of the workflow's commands, having moved the current files into a folder of their
 * own under `test/histories/` (their generation), where they are kept and replayed too (`src/workflows/README.md`, Changing
 * workflow code).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startHarness, type Harness } from './harness';

const record = process.env.ASYNCJOB_RECORD_HISTORIES === '1';

describe.runIf(record)('record histories for the replay test', () => {
  let h: Harness;
  let retries: Harness;
  beforeAll(async () => {
    const scripts = {
      three_polls: { steps: [{ state: 'queued', polls: 1 }, { state: 'running', polls: 1 }, { state: 'succeeded' }] },
      race: { steps: [{ state: 'running' }], cancel: { afterMs: 100, outcome: 'succeeded' } },
      review_then_done: {
        steps: [{ state: 'running', polls: 1 }, { state: 'manual_review', polls: 1 }, { state: 'succeeded' }],
      },
      cancellable: { steps: [{ state: 'running' }], cancel: { afterMs: 50, outcome: 'cancelled' } },
      retry_after: {
        steps: [{ state: 'running', polls: 2 }, { state: 'succeeded' }],
        faults: [{ on: 'status', nth: 1, fault: { kind: 'http_error', status: 503, retryAfterSeconds: 1 } }],
      },
    };
    h = await startHarness('record', {
      scenarios: { rest: { scripts }, lro: { scripts }, 'operation-location': { scripts } } as never,
    });
    // A worker whose loop keeps waits up to 100 ms: longer ones are retries of the status activity.
    retries = await startHarness('record-retries', {
      scenarios: { rest: { scripts } } as never,
      pollLoop: { maxWaitMs: 100, maxLoopMs: 60_000, retryWaits: true },
    });
  });
  afterAll(async () => {
    await h?.stop();
    await retries?.stop();
  });

  const save = async (name: string, operationId: string, from: Harness = h) => {
    const history = await from.env.client.workflow.getHandle(operationId).fetchHistory();
    await writeFile(
      path.join(__dirname, '..', 'histories', `${name}.json`),
      JSON.stringify(JSON.parse(historyToJSON(history)), null, 1) + '\n',
    );
  };
  /** Waits until the workflow's copy is in one of `states`. */
  const waitFor = async (id: string, ...states: string[]) => {
    while (
      !states.includes(
        await h.client.get(id).then(
          (r) => r.localState,
          () => 'starting',
        ),
      )
    )
      await new Promise((r) => setTimeout(r, 50));
  };

  it('records', async () => {
    for (const dialect of ['rest', 'lro', 'operation-location'] as const) {
      const request = h.request(dialect, { script: 'three_polls' });
      await h.client.start(request);
      await h.client.result(request.operationId);
      await save(`happy-${dialect}`, request.operationId);
    }
    const retry = h.request('rest', { script: 'retry_after' });
    await h.client.start(retry);
    await h.client.result(retry.operationId);
    await save('retry-after-503', retry.operationId);

    const race = h.request('rest', { script: 'race' });
    await h.client.start(race);
    // The job polled: the create's activity reads on for its first 2 s, so the copy may never show `accepted` (P8).
    await waitFor(race.operationId, 'accepted', 'observing');
    await h.client.cancel(race.operationId, { requestedBy: 'alice@example.com', reason: 'not needed' });
    await h.client.result(race.operationId);
    await save('cancel-race', race.operationId);

    const review = h.request('rest', { script: 'review_then_done' });
    await h.client.start(review);
    await waitFor(review.operationId, 'escalated');
    const escalation = await h.client.escalation(review.operationId);
    const extend = escalation!.options.find((o) => o.option === 'extend')!;
    await h.client.decide(review.operationId, {
      option: 'extend',
      approvedBy: 'bob@example.com',
      reason: 'checked',
      extendMs: extend.extendMs!,
      extraStatusRequests: extend.extraStatusRequests!,
    });
    await h.client.result(review.operationId);
    await save('escalate-extend', review.operationId);

    // An agent asks for more time, a second agent's request joins the escalation, a person extends, then cancels.
    const asked = h.request('rest', { script: 'cancellable' });
    await h.client.start(asked);
    await waitFor(asked.operationId, 'observing');
    for (const requestedBy of ['agent:report-bot', 'agent:helper-bot'])
      await h.client.requestExtension(asked.operationId, { requestedBy, reason: 'a large export', extendMs: 600_000 });
    const offered = (await h.client.escalation(asked.operationId))!.options.find((o) => o.option === 'extend')!;
    await h.client.decide(asked.operationId, {
      option: 'extend',
      approvedBy: 'alice@example.com',
      reason: 'fine',
      extendMs: offered.extendMs!,
      extraStatusRequests: offered.extraStatusRequests!,
    });
    await h.client.cancel(asked.operationId, { requestedBy: 'alice@example.com', reason: 'done waiting' });
    await h.client.result(asked.operationId);
    await save('extension-join', asked.operationId);

    const waits = retries.request('rest', {
      script: 'retry_after',
      policy: { baseDelayMs: 300, maxDelayMs: 300, minJitterRatio: 1 },
    });
    await retries.client.start(waits);
    await retries.client.result(waits.operationId);
    await save('retry-waits-rest', waits.operationId, retries);
  });
});
