/**
 * The per-provider rate limit on a real server, under CPU load: the instants at which our HTTP client started
 * writing each provider request (as it records them, at write time) are at least one pace interval apart, so no
 * sliding second holds more than `maxRequestsPerSecond`, however many operations run at once and however busy the
 * machine is. The test asserts spacing between recorded instants, never a wall-clock deadline; the provider's own
 * view of the rate (arrival times, which add the server's scheduling under load) is measured by the bench.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paceOf } from '../../src/activities/request-pacer';
import { REQUEST_WRITTEN_CHANNEL, type RequestWrittenMessage } from '../../src/adapters/http';
import { startHarness, type Harness } from './harness';
// Counted exactly as the benchmark counts them.
import { maxInWindow } from '../../bench/lib/stats';

const LIMIT = 5;
const OPERATIONS = 12;

describe('per-provider rate limit on a real server', () => {
  let h: Harness;
  let busy: Worker | undefined;
  const published: RequestWrittenMessage[] = [];
  const listener = (message: unknown): void => void published.push(message as RequestWrittenMessage);

  beforeAll(async () => {
    const scripts = {
      two_reads: { steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }] },
      five_reads: { steps: [{ state: 'running', polls: 4 }, { state: 'succeeded' }] },
    };
    h = await startHarness('rate', { maxRequestsPerSecond: LIMIT, scenarios: { rest: { scripts } } as never });
    subscribe(REQUEST_WRITTEN_CHANNEL, listener);
  });
  afterAll(async () => {
    unsubscribe(REQUEST_WRITTEN_CHANNEL, listener);
    await busy?.terminate();
    await h?.stop();
  });

  it(`under CPU load, the provider's requests are written at least one interval apart: no sliding second holds more than ${LIMIT}`, async () => {
    // Deadlines far beyond the paced run, so a slow machine makes the test slower, never different.
    const deadlines = { createDeadline: { afterMs: 300_000 }, resultDeadline: { afterMs: 300_000 } };
    const requests = Array.from({ length: OPERATIONS }, () => h.request('rest', { script: 'two_reads', ...deadlines }));
    await Promise.all(requests.map((r) => h.client.start(r)));
    // A busy loop on another thread while the requests go out: the worker's event loop competes for the CPU as on
    // a loaded CI machine.
    busy = new Worker('for (;;) {}', { eval: true });
    await once(busy, 'online');
    const summaries = await Promise.all(requests.map((r) => h.client.result(r.operationId)));
    expect(summaries.filter((s) => s.localState !== 'succeeded')).toEqual([]);
    const origin = new URL(h.sims.rest.url).origin;
    const sends = published.filter((m) => m.origin === origin).map((m) => m.writtenAtMs);
    const received = h.sims.rest.requests().filter((r) => r.action !== 'sim');
    // Create, two status reads and the result for each: enough to keep the limit busy for several seconds.
    expect(sends.length).toBeGreaterThanOrEqual(OPERATIONS * 4);
    // Every request the provider received was written through the client, its send instant recorded.
    expect(received).toHaveLength(sends.length);
    const { intervalMs } = paceOf(LIMIT);
    sends.slice(1).forEach((sentAtMs, i) => expect(sentAtMs - sends[i]!).toBeGreaterThanOrEqual(intervalMs));
    expect(maxInWindow(sends, 1_000)).toBeLessThanOrEqual(LIMIT);
  });

  it('P4 under the limit: the status loop keeps reads in one activity, each read paced as it is written', async () => {
    const from = published.length;
    const deadlines = { createDeadline: { afterMs: 300_000 }, resultDeadline: { afterMs: 300_000 } };
    // Reads 300 ms apart: inside the loop's wait, so each operation's reads after the first stay in one activity.
    const policy = { baseDelayMs: 300, maxDelayMs: 300, minJitterRatio: 1 };
    const requests = Array.from({ length: 4 }, () => h.request('rest', { script: 'five_reads', ...deadlines, policy }));
    await Promise.all(requests.map((r) => h.client.start(r)));
    const summaries = await Promise.all(requests.map((r) => h.client.result(r.operationId)));
    expect(summaries.filter((s) => s.localState !== 'succeeded')).toEqual([]);
    for (const request of requests) {
      const history = await h.env.client.workflow.getHandle(request.operationId).fetchHistory();
      const scheduled = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name);
      expect(scheduled.filter((name) => name === 'readStatus')).toHaveLength(0);
      expect(scheduled.filter((name) => name === 'pollStatus').length).toBeLessThan(5);
    }
    const origin = new URL(h.sims.rest.url).origin;
    const sends = published
      .slice(from)
      .filter((m) => m.origin === origin)
      .map((m) => m.writtenAtMs);
    const { intervalMs } = paceOf(LIMIT);
    sends.slice(1).forEach((sentAtMs, i) => expect(sentAtMs - sends[i]!).toBeGreaterThanOrEqual(intervalMs));
    expect(maxInWindow(sends, 1_000)).toBeLessThanOrEqual(LIMIT);
  });
});
