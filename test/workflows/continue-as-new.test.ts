import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHarness, type Harness } from './harness';

/**
 * The smallest cap the workflow input accepts, below the dev server's own suggestion (200 events, see
 * test/setup/temporal-global-setup.ts), so the workflow's cap is what ends each run. A poll costs about seven
 * history events (timer, status activity, workflow tasks), so a run holds about fifteen polls: ten hops here, in
 * seconds (5,000 polls took minutes and proved nothing more).
 */
const HISTORY_EVENT_LIMIT = 100;
const POLLS = 150;
/** Twice the polls a capped run holds (about fifteen): fewer runs would mean the cap did not end them. */
const MAX_POLLS_PER_RUN = 30;
/** Runs that receive webhook hints (the operation must hop at least once more after the last of them). */
const HINTED_RUNS = 4;
const HINTS_PER_RUN = 2;

describe('continue-as-new', () => {
  let h: Harness;
  beforeAll(async () => {
    // One activity per status read: the history-heavy path (reads inside one activity add almost no events).
    h = await startHarness('can', {
      pollLoop: false,
      scenarios: {
        rest: { scripts: { marathon: { steps: [{ state: 'running', polls: POLLS - 1 }, { state: 'succeeded' }] } } },
      } as never,
    });
  });
  afterAll(async () => h?.stop());

  /** Waits until the operation's latest run is another than `previousRunId` (a continue-as-new happened). */
  const nextRun = (operationId: string, previousRunId: string): Promise<string> =>
    vi.waitFor(
      async () => {
        const { runId } = await h.env.client.workflow.getHandle(operationId).describe();
        if (runId === previousRunId) throw new Error(`${operationId} is still in run ${runId}`);
        return runId;
      },
      { timeout: 60_000, interval: 20 },
    );

  /** Sends hints into each of the first runs as soon as it starts; resolves with the event IDs in sending order. */
  const hintEachRun = async (operationId: string, firstRunId: string): Promise<string[]> => {
    const sent: string[] = [];
    let runId = firstRunId;
    for (let run = 1; run <= HINTED_RUNS; run++) {
      for (let n = 1; n <= HINTS_PER_RUN; n++) {
        const eventId = `evt-run${run}-${n}`;
        await h.client.signalWebhook(operationId, { eventId });
        sent.push(eventId);
      }
      runId = await nextRun(operationId, runId);
    }
    return sent;
  };

  it(`B1: an operation polling ${POLLS} times continues as new every ${HISTORY_EVENT_LIMIT} events, takes messages across the hops, keeps its counters and ends with a complete store record`, async () => {
    const request = h.request('rest', {
      script: 'marathon',
      resultDeadline: { afterMs: 5 * 60_000 },
      policy: { baseDelayMs: 1, maxDelayMs: 1, maxStatusRequests: POLLS + 10 },
    });
    await h.client.start(request, { historyEventLimit: HISTORY_EVENT_LIMIT });
    const { runId: firstRunId } = await h.env.client.workflow.getHandle(request.operationId).describe();
    const hints = await hintEachRun(request.operationId, firstRunId);
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('succeeded');
    expect(summary.statusRequestsUsed).toBe(POLLS);
    expect(h.statusReads('rest', summary.jobId)).toHaveLength(POLLS);
    // Several runs, each small: the history of no run grew much past the limit (one poll and the hand-over).
    const runs: number[] = [];
    for await (const execution of h.env.client.workflow.list({ query: `WorkflowId = '${request.operationId}'` }))
      runs.push(execution.historyLength);
    expect(runs.length).toBeGreaterThanOrEqual(POLLS / MAX_POLLS_PER_RUN);
    expect(Math.max(...runs)).toBeLessThan(HISTORY_EVENT_LIMIT + 50);
    // The store holds every observation and transition in one unbroken chain.
    const entries = (await h.store.entries(request.operationId)).map((e) => e.entry);
    expect(entries.filter((e) => e.body.kind === 'observation' && e.body.action === 'status')).toHaveLength(POLLS);
    expect(entries.map((e) => e.sequence)).toEqual(entries.map((_, i) => i + 1));
    expect((await h.store.verifyChains({ operationId: request.operationId })).breaks).toEqual([]);
    // Every hint sent across the hops was recorded once, in the order sent: no message lost or taken twice.
    const recordedHints = entries.flatMap((e) =>
      e.body.kind === 'observation' && e.body.action === 'webhook'
        ? [/^webhook (\S+):/.exec(e.body.note ?? '')?.[1]]
        : [],
    );
    expect(recordedHints).toEqual(hints);
  }, 180_000);
});
