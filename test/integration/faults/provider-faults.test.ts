/**
 * F1, F3, F7 and F8 against one real worker PROCESS (`runWorker` from the environment) and three simulators:
 * dropped creates, a success racing a cancel, 429 storms and Retry-After in both forms, and hostile answers
 * (not JSON, HTML, missing and mistyped fields, a 50 MB body, absurd hints, a foreign Location). Every assertion
 * reads the simulator's accounting or the store; the worker process must stay up with bounded memory throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationRecord } from '../../../src/core/operation';
import type { JournalEntryBody } from '../../../src/core/journal';
import { startSimulator, type Simulator } from '../../../src/simulator';
import {
  DIALECTS,
  SIM_TOKEN,
  startFaultWorld,
  type Dialect,
  type FaultWorld,
  type WorkerProcess,
} from './fault-harness';

const MB = 1024 * 1024;
const forever = [{ state: 'running' }];
const twoPolls = [{ state: 'running', polls: 2 }, { state: 'succeeded' }];
const statusFault = (nth: number | 'every', fault: Record<string, unknown>) => ({ on: 'status', nth, fault });

const scripts = {
  f1_drop: { steps: twoPolls, faults: [{ on: 'create', nth: 1, fault: { kind: 'drop' } }] },
  f3_race: {
    steps: forever,
    cancel: { afterMs: 150, outcome: 'succeeded' },
    result: { kind: 'json', body: { ok: true } },
  },
  f7_storm: { steps: forever, faults: [statusFault('every', { kind: 'http_error', status: 429 })] },
  f7_429_ra: {
    steps: [{ state: 'running', polls: 3 }, { state: 'succeeded' }],
    faults: [
      statusFault(1, { kind: 'http_error', status: 429, retryAfterSeconds: 1 }),
      statusFault(2, { kind: 'http_error', status: 429, retryAfterSeconds: 1 }),
    ],
  },
  f7_503_seconds: {
    steps: twoPolls,
    faults: [statusFault(1, { kind: 'http_error', status: 503, retryAfterSeconds: 1 })],
  },
  f7_503_date: {
    steps: twoPolls,
    faults: [statusFault(1, { kind: 'http_error', status: 503, retryAfterDateInSeconds: 2 })],
  },
  f8_non_json: { steps: twoPolls, faults: [statusFault(1, { kind: 'malformed', body: 'non_json' })] },
  f8_html: { steps: twoPolls, faults: [statusFault(1, { kind: 'malformed', body: 'html' })] },
  f8_missing: { steps: twoPolls, faults: [statusFault(1, { kind: 'malformed', body: 'missing_fields' })] },
  f8_wrong_types: { steps: twoPolls, faults: [statusFault(1, { kind: 'malformed', body: 'wrong_types' })] },
  f8_huge: { steps: forever, faults: [statusFault(1, { kind: 'malformed', body: 'huge', sizeBytes: 50 * MB })] },
  f8_hints: {
    steps: [
      { state: 'running', polls: 1, pollAfterSeconds: -5 },
      { state: 'running', polls: 1, pollAfterSeconds: 'soon' },
      { state: 'running', polls: 1, nextCheckAt: 'next tuesday' },
      { state: 'running', polls: 1, nextCheckAt: { inMs: 1e12 } },
      { state: 'succeeded' },
    ],
  },
  f8_bad_retry_after: {
    steps: twoPolls,
    faults: [statusFault(1, { kind: 'http_error', status: 503, retryAfterRaw: 'next tuesday, maybe' })],
  },
  f8_foreign: {
    steps: twoPolls,
    faults: [
      { on: 'create', nth: 1, fault: { kind: 'foreign_location' } },
      statusFault('every', { kind: 'foreign_location' }),
    ],
  },
  plain: { steps: twoPolls },
  create_503: { steps: twoPolls, faults: [{ on: 'create', nth: 1, fault: { kind: 'http_error', status: 503 } }] },
  result_429: {
    steps: twoPolls,
    faults: [{ on: 'result', nth: 1, fault: { kind: 'http_error', status: 429, retryAfterSeconds: 1 } }],
  },
};

const bodies = (entries: { entry: { body: JournalEntryBody } }[]): JournalEntryBody[] =>
  entries.map((e) => e.entry.body);

describe('hostile providers against a worker process', () => {
  let world: FaultWorld;
  let worker: WorkerProcess;
  let foreign: Simulator;

  beforeAll(async () => {
    // The other origin the foreign_location fault points at: a simulator of its own that records what it gets.
    foreign = await startSimulator({ dialect: 'rest', token: `${SIM_TOKEN}-foreign` });
    const scenario = { scripts, foreignBaseUrl: foreign.url };
    world = await startFaultWorld('hostile', {
      scenarios: { rest: scenario, lro: scenario, 'operation-location': scenario } as never,
    });
    worker = world.spawnWorker();
    await worker.ready;
  });
  afterAll(async () => {
    await world?.stop();
    await foreign?.stop();
  });

  async function run(dialect: Dialect, script: keyof typeof scripts, policy: Record<string, unknown> = {}) {
    const request = world.request(dialect, {
      script,
      policy: { baseDelayMs: 20, maxDelayMs: 200, notFoundWindowMs: 2_000, decisionDeadlineMs: 500, ...policy },
    });
    await world.client.start(request);
    const summary = await world.client.result(request.operationId);
    const snapshot = await world.store.getOperation(request.operationId);
    expect(snapshot).not.toBeNull();
    const record = snapshot!.record as unknown as OperationRecord;
    const journal = bodies(await world.store.entries(request.operationId));
    const reads = record.jobId !== undefined ? world.jobRequests(dialect, record.jobId, 'status') : [];
    expect((await world.store.verifyChains({ operationId: request.operationId })).breaks).toEqual([]);
    return { request, summary, record, journal, reads };
  }

  it.each(DIALECTS)(
    'F1: %s create response dropped after acceptance: exactly one provider job, the operation succeeds',
    async (dialect) => {
      const { summary, record, journal } = await run(dialect, 'f1_drop');
      expect(summary.localState).toBe('succeeded');
      expect(world.sims[dialect].jobsByToken(record.idempotencyToken)).toHaveLength(1);
      // The drop really happened: the first create under this token got no answer.
      const creates = world.sims[dialect].requests({ action: 'create', idempotencyKey: record.idempotencyToken });
      expect(creates[0]?.fault).toBe('drop');
      expect(creates[0]?.status).toBeUndefined();
      expect(journal.some((b) => b.kind === 'transition' && b.to === 'create_unknown')).toBe(true);
      expect(journal.filter((b) => b.kind === 'artifact')).toHaveLength(1);
    },
  );

  it.each(DIALECTS)(
    'F3, X2: %s terminal success during a cancel: cancel_requested -> cancelling -> succeeded, in order, result collected',
    async (dialect) => {
      const request = world.request(dialect, { script: 'f3_race' });
      await world.client.start(request);
      await world.waitForState(request.operationId, ['accepted', 'observing']);
      await world.client.cancel(request.operationId, {
        requestedBy: 'alice@example.com',
        reason: 'F3: the report is no longer needed',
      });
      const summary = await world.client.result(request.operationId);
      expect(summary.localState).toBe('succeeded');
      const states = await world.transitions(request.operationId);
      const at = (s: string) => states.indexOf(s as never);
      expect(at('cancel_requested')).toBeGreaterThan(-1);
      expect(at('cancelling')).toBeGreaterThan(at('cancel_requested'));
      expect(states.lastIndexOf('succeeded')).toBeGreaterThan(at('cancelling'));
      const record = (await world.store.getOperation(request.operationId))!.record as unknown as OperationRecord;
      expect(world.jobRequests(dialect, record.jobId!, 'cancel')).toHaveLength(1);
      expect(world.jobRequests(dialect, record.jobId!, 'result')).toHaveLength(1);
      expect(await world.store.artifacts(request.operationId)).toHaveLength(1);
      expect(world.sims[dialect].job(record.jobId!)?.cancelRequested).toBe(true);
    },
  );

  it('F7, H1: a 429 storm without Retry-After backs off sharply, charges every 429 and escalates rate_limited after maxRateLimited in a row', async () => {
    const { summary, record, reads } = await run('rest', 'f7_storm', {
      baseDelayMs: 100,
      maxDelayMs: 10_000,
      maxRateLimited: 3,
      rateLimitMultiplier: 4,
      minJitterRatio: 0.5,
    });
    expect(summary.escalation?.reason).toBe('rate_limited');
    expect(reads).toHaveLength(3);
    expect(reads.every((r) => r.status === 429)).toBe(true);
    expect(record.used.rateLimited).toBe(3);
    expect(record.used.statusRequests).toBe(3);
    // Without the sharp increase the first backoff would be 50..100 ms; with it at least 4 x 50 ms.
    for (let i = 1; i < reads.length; i++) expect(reads[i]!.atMs - reads[i - 1]!.atMs).toBeGreaterThanOrEqual(200);
  });

  it('F7, H1, P3: 429 with Retry-After 1 s twice: each next read waits at least 1 s; the counter of 429s in a row resets', async () => {
    const { summary, record, reads } = await run('lro', 'f7_429_ra', { maxRateLimited: 3 });
    expect(summary.localState).toBe('succeeded');
    expect(reads.slice(0, 2).map((r) => r.status)).toEqual([429, 429]);
    expect(reads[1]!.atMs - reads[0]!.atMs).toBeGreaterThanOrEqual(1_000);
    expect(reads[2]!.atMs - reads[1]!.atMs).toBeGreaterThanOrEqual(1_000);
    expect(record.used.rateLimited).toBe(2);
    expect(record.used.consecutiveRateLimited).toBe(0);
    expect(record.used.statusRequests).toBe(reads.length);
  });

  it.each([
    ['seconds', 'f7_503_seconds'],
    ['an HTTP-date', 'f7_503_date'],
  ] as const)(
    'F7, P3: 503 with Retry-After as %s is a minimum wait, measured at the provider; the transport budget is charged',
    async (_form, script) => {
      const { summary, record, reads } = await run('operation-location', script);
      expect(summary.localState).toBe('succeeded');
      expect(reads[0]!.status).toBe(503);
      // The HTTP-date has a one-second resolution: 2 s from now is at least 1 s away.
      expect(reads[1]!.atMs - reads[0]!.atMs).toBeGreaterThanOrEqual(1_000);
      expect(record.used.transportFailures).toBe(1);
      expect(record.used.statusRequests).toBe(reads.length);
    },
  );

  it.each([
    ['non_json', 'f8_non_json'],
    ['html', 'f8_html'],
    ['missing_fields', 'f8_missing'],
    ['wrong_types', 'f8_wrong_types'],
  ] as const)(
    'F8, S2: a %s status answer is a classified observation and stops with provider_failure; nothing is read after it',
    async (kind, script) => {
      for (const dialect of DIALECTS) {
        const { summary, record, journal, reads } = await run(dialect, script);
        const observation = journal.find((b) => b.kind === 'observation' && b.action === 'status');
        expect(observation, dialect).toMatchObject({
          kind: 'observation',
          transport: 'response',
          httpStatus: reads[0]!.status,
        });
        expect(worker.child.exitCode).toBeNull();
        if (dialect === 'lro' && kind === 'missing_fields') {
          // AIP-151: an absent `done` means false, so `{}` reads as a pending operation (recorded as not_done);
          // polling goes on and the job ends as the later, well-formed answers say.
          expect(observation).toMatchObject({ remoteState: 'not_done' });
          expect(summary.localState).toBe('succeeded');
          expect(record.used.statusRequests).toBe(reads.length);
          continue;
        }
        expect(summary.escalation?.reason, dialect).toBe('provider_failure');
        expect(reads, dialect).toHaveLength(1);
        expect(record.used.statusRequests).toBe(1);
        expect(
          journal.some((b) => b.kind === 'escalation' && b.reason === 'provider_failure'),
          dialect,
        ).toBe(true);
      }
    },
  );

  it('F8: a 50 MB status body is cut at maxBodyBytes: body_too_large observation, provider_failure, the worker process stays up with bounded memory', async () => {
    const before = worker.rssBytes();
    const { summary, journal, reads } = await run('rest', 'f8_huge');
    const after = worker.rssBytes();
    expect(summary.escalation?.reason).toBe('provider_failure');
    expect(reads).toHaveLength(1);
    expect(journal.find((b) => b.kind === 'observation' && b.action === 'status')).toMatchObject({
      transport: 'body_too_large',
    });
    expect(worker.child.exitCode).toBeNull();
    expect(before).toBeDefined();
    // Reading the 50 MB whole would add at least 50 MB (twice that as a string); the cut keeps it to noise.
    expect(after! - before!).toBeLessThan(30 * MB);
    // Still serving: the next operation succeeds.
    expect((await run('rest', 'plain')).summary.localState).toBe('succeeded');
  });

  it('F8, P3: negative, mistyped and absurd poll hints are rejected and recorded; the job still ends succeeded on local backoff', async () => {
    // Only the rest contract reads poll hints from the body (docs/dialects.md).
    const { summary, journal } = await run('rest', 'f8_hints');
    expect(summary.localState).toBe('succeeded');
    const rejected = journal.filter(
      (b) => b.kind === 'observation' && b.action === 'status' && b.hintRejected !== undefined,
    );
    expect(rejected.length).toBeGreaterThanOrEqual(4);
  });

  it('F8, P3: an unparseable Retry-After (a wrong date format) is not a wait: the next read follows local backoff', async () => {
    const { summary, reads, journal } = await run('rest', 'f8_bad_retry_after');
    expect(summary.localState).toBe('succeeded');
    expect(reads[0]!.status).toBe(503);
    expect(reads[1]!.atMs - reads[0]!.atMs).toBeLessThan(5_000);
    expect(
      journal.find((b) => b.kind === 'observation' && b.action === 'status' && b.httpStatus === 503),
    ).toBeDefined();
  });

  it.each(DIALECTS)(
    'F8, C4, T4: %s links to another origin are dropped; the foreign origin never receives the credential',
    async (dialect) => {
      const { summary, record, journal } = await run(dialect, 'f8_foreign');
      expect(['succeeded', 'escalated']).toContain(summary.localState);
      expect(world.sims[dialect].jobsByToken(record.idempotencyToken)).toHaveLength(1);
      expect(foreign.requests().filter((r) => r.authorization !== 'absent')).toEqual([]);
      expect(
        journal.some(
          (b) =>
            b.kind === 'observation' &&
            (b.errorCategory === 'foreign_origin' ||
              (b.note ?? '').includes('origin') ||
              (b.hintRejected ?? '').includes('origin')),
        ),
      ).toBe(true);
    },
  );

  // Found by the soak: after a 503 on create, a lookup that finds no job before the create deadline re-sends
  // create with the same token (I3), and the provider deduplicates it if the first one did arrive.
  it.each(['rest', 'lro'] as const)(
    'I3, U2: %s a 503 on create, no job found by the lookup: create is re-sent with the same token and the operation succeeds',
    async (dialect) => {
      const request = world.request(dialect, { script: 'create_503', createDeadline: { afterMs: 10_000 } });
      await world.client.start(request);
      const summary = await world.client.result(request.operationId);
      const record = (await world.store.getOperation(request.operationId))!.record as unknown as OperationRecord;
      expect(world.sims[dialect].jobsByToken(record.idempotencyToken).length).toBeLessThanOrEqual(1);
      expect(summary.localState).toBe('succeeded');
    },
  );

  // Found by the bench: a poll policy slower than the create window (here a minute, against a 4 s window) planned
  // the next create-phase call past the create deadline, so a create that never made a job was never sent again.
  it('I3, U2: a lost create under a poll policy slower than the create window is sent again inside the window, with the same token', async () => {
    const request = world.request('rest', {
      script: 'create_503',
      createDeadline: { afterMs: 4_000 },
      policy: { baseDelayMs: 60_000, maxDelayMs: 60_000, notFoundWindowMs: 2_000, cancelDeadlineMs: 10_000 },
    });
    const startedAtMs = Date.now();
    await world.client.start(request);
    try {
      expect(await world.waitForState(request.operationId, ['accepted', 'observing', 'failed', 'escalated'])).toBe(
        'accepted',
      );
      const record = (await world.store.getOperation(request.operationId))!.record as unknown as OperationRecord;
      const creates = world.sims.rest
        .requests({ action: 'create' })
        .filter((r) => r.idempotencyKey === record.idempotencyToken);
      expect(creates.map((r) => r.status)).toEqual([503, expect.any(Number)]);
      // Inside the operation's own create window, which opened when the workflow recorded the start (after
      // startedAtMs, by as long as the start took on a busy machine).
      expect(creates[1]!.atMs).toBeLessThan(record.deadlines.createDeadlineMs);
      expect(record.deadlines.createDeadlineMs - startedAtMs).toBeGreaterThanOrEqual(4_000);
      expect(world.sims.rest.jobsByToken(record.idempotencyToken)).toHaveLength(1);
    } finally {
      await world.temporal.workflow.getHandle(request.operationId).terminate('test cleanup');
    }
  });

  // Found by the soak: a 429 with Retry-After on result collection is a wait (H1), then the collect is repeated.
  it('H1, R5: a 429 with Retry-After on result collection waits and collects again', async () => {
    const { summary, record } = await run('operation-location', 'result_429');
    const collects = world.jobRequests('operation-location', record.jobId!, 'result');
    expect(collects[0]?.status).toBe(429);
    expect(summary.localState).toBe('succeeded');
    expect(collects[1]!.atMs - collects[0]!.atMs).toBeGreaterThanOrEqual(1_000);
  });

  it('T4: the bearer token never appears in the worker process logs', () => {
    expect(worker.logs().length).toBeGreaterThan(0);
    expect(worker.logs()).not.toContain(SIM_TOKEN);
  });
});
