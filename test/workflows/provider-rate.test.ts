/**
 * The per-provider rate limit on a real server: the provider's own request log, counted in sliding 1-second
 * windows, never holds more than `maxRequestsPerSecond` requests, however many operations run at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness';
// Counted exactly as the benchmark counts them.
import { maxInWindow } from '../../bench/lib/stats';

const LIMIT = 5;
const OPERATIONS = 12;

describe('per-provider rate limit on a real server', () => {
  let h: Harness;

  beforeAll(async () => {
    const scripts = { two_reads: { steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }] } };
    h = await startHarness('rate', { maxRequestsPerSecond: LIMIT, scenarios: { rest: { scripts } } as never });
  });
  afterAll(async () => h?.stop());

  it(`the peak never exceeds the limit: no sliding second of the provider's requests holds more than ${LIMIT}`, async () => {
    const requests = Array.from({ length: OPERATIONS }, () => h.request('rest', { script: 'two_reads' }));
    await Promise.all(requests.map((r) => h.client.start(r)));
    const summaries = await Promise.all(requests.map((r) => h.client.result(r.operationId)));
    expect(summaries.map((s) => s.localState)).toEqual(requests.map(() => 'succeeded'));
    const times = h.sims.rest
      .requests()
      .filter((r) => r.action !== 'sim')
      .map((r) => r.atMs);
    // Create, two status reads and the result for each: enough to keep the limit busy for several seconds.
    expect(times.length).toBeGreaterThanOrEqual(OPERATIONS * 4);
    expect(maxInWindow(times, 1_000)).toBe(LIMIT);
  });
});
