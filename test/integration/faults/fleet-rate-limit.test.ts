/**
 * The fleet-wide rate limit with real worker PROCESSES: three workers sharing one PostgreSQL store serve one
 * provider at a limit, and the provider (the simulator, counting arrivals as the cluster run does) never sees
 * more than the limit in any sliding second. The bound holds by construction (`src/core/send-slot.ts`): the test
 * asserts the provider's own count, never a duration.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observedRate } from '../../../scripts/cluster/rate';
import { startPostgresFleet, type FaultWorld, type PostgresFleet, type WorkerProcess } from './fault-harness';

const url = process.env.ASYNCJOB_TEST_PG_URL;
const LIMIT = 5;
const WORKERS = 3;
const OPERATIONS = 12;

const scripts = { two_reads: { steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }] } };

const title = url
  ? 'a provider rate limit across worker processes sharing a PostgreSQL store'
  : 'a provider rate limit across worker processes sharing a PostgreSQL store: SKIPPED because ASYNCJOB_TEST_PG_URL is unset (eval "$(bash scripts/postgres-for-tests.sh start)")';

describe.skipIf(!url)(title, () => {
  let fleet: PostgresFleet;
  let world: FaultWorld;
  let workers: WorkerProcess[] = [];

  beforeAll(async () => {
    fleet = await startPostgresFleet('fleet-rate', url!, {
      scenarios: { rest: { scripts } } as never,
      env: { ASYNCJOB_PROVIDER_RATE_LIMIT: String(LIMIT) },
      workers: WORKERS,
    });
    ({ world, workers } = fleet);
  });
  afterAll(async () => fleet?.stop());

  it(`three workers at ${LIMIT}/s: the provider never sees more than ${LIMIT} requests in any sliding second`, async () => {
    // Deadlines far beyond the paced run, so a slow machine makes the test slower, never different.
    const deadlines = { createDeadline: { afterMs: 300_000 }, resultDeadline: { afterMs: 300_000 } };
    const requests = Array.from({ length: OPERATIONS }, () =>
      world.request('rest', { script: 'two_reads', ...deadlines }),
    );
    await Promise.all(requests.map((r) => world.client.start(r)));
    const summaries = await Promise.all(requests.map((r) => world.client.result(r.operationId)));
    expect(summaries.filter((s) => s.localState !== 'succeeded')).toEqual([]);

    const received = world.sims.rest.requests();
    const rate = observedRate(received, LIMIT);
    // Create, two status reads and the result for each operation.
    expect(rate.requests).toBeGreaterThanOrEqual(OPERATIONS * 4);
    expect(rate.windowsOverLimit).toBe(0);
    expect(rate.maxInWindow).toBeLessThanOrEqual(LIMIT);
    // A fleet, not one busy worker: more than one process made provider calls.
    const calling = workers.filter((w) => w.logs().includes('"provider call"'));
    expect(calling.length).toBeGreaterThan(1);
    // The status loop stays on under the limit: its reads took their slots like every other request.
    expect(workers.some((w) => w.logs().includes('"status loop handed back"'))).toBe(true);
    // The slots came from the shared row of the provider's queue.
    const rows = await fleet.raw.query<{ task_queue: string }>(
      `SELECT task_queue FROM "${fleet.schema}".provider_send_slots`,
    );
    expect(rows.rows.map((row) => row.task_queue)).toContain(`${world.taskQueue}-provider-${world.provider('rest')}`);
  });
});
