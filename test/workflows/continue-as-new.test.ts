import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness';

const POLLS = 5_000;

describe('continue-as-new', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('can', {
      scenarios: {
        rest: { scripts: { marathon: { steps: [{ state: 'running', polls: POLLS - 1 }, { state: 'succeeded' }] } } },
      } as never,
    });
  });
  afterAll(async () => h?.stop());

  it(
    `an operation polling ${POLLS} times continues as new, keeps its counters and ends with a complete store record`,
    async () => {
      const request = h.request('rest', {
        script: 'marathon',
        resultDeadline: { afterMs: 20 * 60_000 },
        policy: { baseDelayMs: 1, maxDelayMs: 1, maxStatusRequests: POLLS + 10 },
      });
      await h.client.start(request, { historyEventLimit: 2_000 });
      const summary = await h.client.result(request.operationId);
      expect(summary.localState).toBe('succeeded');
      expect(summary.statusRequestsUsed).toBe(POLLS);
      expect(h.statusReads('rest', summary.jobId)).toHaveLength(POLLS);
      // Several runs, each small: the history of no run grew past the limit.
      const runs: number[] = [];
      for await (const execution of h.env.client.workflow.list({ query: `WorkflowId = '${request.operationId}'` }))
        runs.push(execution.historyLength);
      expect(runs.length).toBeGreaterThan(POLLS / 250);
      expect(Math.max(...runs)).toBeLessThan(2_100);
      // The store holds every observation and transition in one unbroken chain.
      const entries = (await h.store.entries(request.operationId)).map((e) => e.entry);
      expect(entries.filter((e) => e.body.kind === 'observation' && e.body.action === 'status')).toHaveLength(POLLS);
      expect(entries.map((e) => e.sequence)).toEqual(entries.map((_, i) => i + 1));
      expect((await h.store.verifyChains({ operationId: request.operationId })).breaks).toEqual([]);
    },
    15 * 60_000,
  );
});
