/**
 * The cluster run's measure of a fleet's request rate, from the provider's request log: the most requests that
 * arrived within any one second, against the configured limit.
 */
import { describe, expect, it } from 'vitest';
import { busiestWindow, observedRate } from '../../scripts/cluster/rate';
import type { RequestRecord } from '../../src/simulator/accounting';

const at = (atMs: number, action: RequestRecord['action'] = 'status'): RequestRecord =>
  ({ seq: atMs, atMs, method: 'GET', path: '/', query: '', action, requestId: 'r' }) as RequestRecord;

describe('observed fleet rate', () => {
  it('counts the most arrivals in any window starting at an arrival, and the windows over the limit', () => {
    // Evenly 5 per second for 2 s, then a burst of 4 within 30 ms.
    const records = [...Array.from({ length: 10 }, (_, i) => at(i * 200)), at(2_000), at(2_010), at(2_020), at(2_030)];
    const rate = observedRate(records, 5);
    // [1,200 .. 2,030] holds 1200,1400,1600,1800,2000,2010,2020,2030: 8 within one second.
    expect(rate.maxInWindow).toBe(8);
    expect(rate.requests).toBe(14);
    expect(rate.windowsOverLimit).toBeGreaterThan(0);
    expect(rate.meanPerSecond).toBeCloseTo((14 * 1000) / 2_030, 1);
  });

  it('a window is half-open: an arrival exactly one window later starts the next one', () => {
    const rate = observedRate([at(0), at(500), at(1_000), at(1_500)], 2);
    expect(rate.maxInWindow).toBe(2);
    expect(rate.windowsOverLimit).toBe(0);
  });

  it("ignores the simulator's own endpoints and unrouted requests", () => {
    const rate = observedRate([at(0), at(1, 'sim'), at(2, 'unknown'), at(3)], 1);
    expect(rate.requests).toBe(2);
    expect(rate.maxInWindow).toBe(2);
  });

  it('an empty log is no rate at all', () => {
    expect(observedRate([], 10)).toEqual({ requests: 0, maxInWindow: 0, meanPerSecond: 0, windowsOverLimit: 0 });
  });

  it("names the busiest window's requests, each with its offset, action and sending host", () => {
    const from = (atMs: number, host: string, action: RequestRecord['action'] = 'status'): RequestRecord => ({
      ...at(atMs, action),
      from: host,
    });
    const records = [
      from(0, '10.0.0.1'),
      from(1_500, '10.0.0.2', 'create'),
      from(1_503, '10.0.0.1'),
      from(2_400, '10.0.0.2'),
    ];
    expect(busiestWindow(records)).toEqual({
      startMs: 1_500,
      requests: ['+0 create from 10.0.0.2', '+3 status from 10.0.0.1', '+900 status from 10.0.0.2'],
    });
  });
});
