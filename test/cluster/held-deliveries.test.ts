/**
 * The requests the partition's network held: told apart by the cut-off worker's own log of each call, so the
 * fleet's limit is measured strictly on every other request.
 */
import { describe, expect, it } from 'vitest';
import { heldThrough, loggedCalls, type LoggedCall } from '../../scripts/cluster/held-deliveries';
import type { RequestRecord } from '../../src/simulator/accounting';

const record = (requestId: string, atMs: number): RequestRecord =>
  ({ seq: 1, atMs, method: 'GET', path: '/', query: '', action: 'status', requestId }) as RequestRecord;
const call = (providerRequestId: string, startedAtMs: number, provider = 'rest'): LoggedCall => ({
  provider,
  providerRequestId,
  startedAtMs,
});

describe('requests held through the partition', () => {
  it("reads each provider call from a worker's JSON log, its start from the answer's instant less its duration", () => {
    const text = [
      'not json: the SDK starting',
      JSON.stringify({
        ts: '2026-12-03T10:00:01.500Z',
        level: 'info',
        msg: 'provider call',
        provider: 'rest',
        providerRequestId: 'req_7',
        durationMs: 1_500,
      }),
      JSON.stringify({
        ts: '2026-12-03T10:00:02.000Z',
        level: 'info',
        msg: 'provider call',
        provider: 'rest',
        durationMs: 30_000,
      }),
      JSON.stringify({
        ts: '2026-12-03T10:00:03.000Z',
        level: 'info',
        msg: 'workflow task',
        providerRequestId: 'req_8',
      }),
      '{"truncated":',
    ].join('\n');
    expect(loggedCalls(text)).toEqual([
      { provider: 'rest', providerRequestId: 'req_7', startedAtMs: Date.parse('2026-12-03T10:00:00.000Z') },
    ]);
  });

  it('a request sent before the worker was joined again that arrived after the cut was held; no other is', () => {
    const span = { cutAtMs: 10_000, restoredAtMs: 40_000 };
    const calls = [
      call('req_1', 9_000), // answered before the cut
      call('req_2', 9_990), // written just before the cut, delivered when the network came back
      call('req_3', 41_000), // sent after the worker was joined again, on its own slot
      call('req_4', 9_995, 'lro'), // another provider's request of the same number
    ];
    const records = [record('req_1', 9_010), record('req_2', 40_120), record('req_3', 41_005), record('req_4', 40_130)];
    expect([...heldThrough([span], 'rest', calls, records)]).toEqual(['req_2']);
  });

  it('a request of another worker is never held, whatever its instants', () => {
    const span = { cutAtMs: 10_000, restoredAtMs: 40_000 };
    expect(heldThrough([span], 'rest', [], [record('req_9', 40_001)]).size).toBe(0);
  });

  it('with a brief cut before the long one, a request is held only when it crossed one of the cuts', () => {
    const spans = [
      { cutAtMs: 10_000, restoredAtMs: 11_500 }, // a try that found the worker holding nothing
      { cutAtMs: 14_000, restoredAtMs: 44_000 },
    ];
    const calls = [
      call('req_1', 9_990), // written just before the first cut, delivered when it was joined again
      call('req_2', 12_000), // between the cuts, delivered at once
      call('req_3', 13_990), // written just before the second cut, delivered at its end
      call('req_4', 45_000), // after the partition
    ];
    const records = [
      record('req_1', 11_600),
      record('req_2', 12_004),
      record('req_3', 44_100),
      record('req_4', 45_003),
    ];
    expect([...heldThrough(spans, 'rest', calls, records)]).toEqual(['req_1', 'req_3']);
  });

  it('without a partition nothing is held', () => {
    expect(heldThrough([], 'rest', [call('req_1', 1)], [record('req_1', 2)]).size).toBe(0);
  });
});
