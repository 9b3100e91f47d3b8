/**
 * A fleet-wide rate limit whose PostgreSQL send slots cannot be had: the provider call fails before it writes
 * anything, and says so, so the workflow takes it for a request that never left (the answer policy's `not_sent`
 * row), not for one that may have arrived. A create is then sent again with its token once slots are back, never
 * reconciled: one create request, one job, no `create_unknown`. The outage is real (a pool pointed at a port
 * nothing listens on); the slots after it are the real store's. Without PostgreSQL the same outage is proved with
 * slots that are always free after it, so the default run proves the workflow's side too.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresOperationStore } from '../../src/adapters/store/postgres-store';
import { startHarness, type Harness } from './harness';

const url = process.env.ASYNCJOB_TEST_PG_URL;

const title = url
  ? 'send slots unavailable (PostgreSQL down)'
  : 'send slots unavailable (PostgreSQL down), slots always free after it (ASYNCJOB_TEST_PG_URL unset)';

/** Slots that are always free: the instant asked is the slot, on the worker's own clock. */
async function freeSlot(): Promise<{ slotAtUs: number; databaseNowUs: number }> {
  const nowUs = Date.now() * 1000;
  return { slotAtUs: nowUs, databaseNowUs: nowUs };
}

describe(title, () => {
  const schema = `asyncjob_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  let slots: PostgresOperationStore | undefined;
  let outage = true;
  let h: Harness;

  beforeAll(async () => {
    if (url !== undefined) slots = await openPostgresStore({ connectionString: url, schema, maxConnections: 2 });
    // The server gone: a reservation fails as it does in an outage, connecting (connection refused).
    const gone = new URL(url ?? 'postgres://postgres@127.0.0.1:5432/asyncjob');
    gone.port = '1';
    const unreachable = async (): Promise<never> => {
      await new Client({ connectionString: gone.toString() }).connect();
      throw new Error(`a server answered on ${gone.host}`);
    };
    h = await startHarness('slot-outage', {
      maxRequestsPerSecond: 20,
      reserveProviderSend: (queue, intervalMs) =>
        outage ? unreachable() : (slots?.reserveProviderSend(queue, intervalMs) ?? freeSlot()),
      scenarios: { rest: { scripts: { one_read: { steps: [{ state: 'succeeded' }] } } } } as never,
    });
  });
  afterAll(async () => {
    await h?.stop();
    await slots?.close();
    if (url === undefined) return;
    const raw = new Client({ connectionString: url });
    await raw.connect();
    await raw.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await raw.end();
  });

  it('B2, U1: a create that got no send slot sent nothing; it is sent again with its token once slots are back, never reconciled', async () => {
    const deadlines = { createDeadline: { afterMs: 120_000 }, resultDeadline: { afterMs: 120_000 } };
    const request = h.request('rest', { script: 'one_read', ...deadlines });
    await h.client.start(request);
    // The calls that failed for want of a slot, as the journal records them.
    const failedCalls = async () =>
      (await h.store.entries(request.operationId)).flatMap(({ entry: { body } }) =>
        body.kind === 'observation' && body.errorCategory === 'activity_failed' ? [body] : [],
      );
    while ((await failedCalls()).length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
    outage = false;
    const summary = await h.client.result(request.operationId);
    expect(summary.localState).toBe('succeeded');
    const record = await h.client.get(request.operationId);
    const creates = h.sims.rest.requests({ action: 'create', idempotencyKey: record.idempotencyToken });
    expect(creates).toHaveLength(1);
    const bodies = (await h.store.entries(request.operationId)).map(({ entry }) => entry.body);
    expect(bodies.flatMap((b) => (b.kind === 'transition' ? [b.to] : []))).not.toContain('create_unknown');
    const failed = await failedCalls();
    expect(failed.length).toBeGreaterThanOrEqual(2);
    for (const body of failed)
      expect(body).toMatchObject({ action: 'create', transport: 'not_sent', decision: 'retry' });
    expect(JSON.stringify(bodies)).toContain('before sending anything');
  });
});
