/**
 * The activities against the real simulator in all three dialects, inside `MockActivityEnvironment`, with a
 * temp SQLite store and artifact directory. Every claim is checked from the simulator's accounting (what it
 * received) and from the store (what was recorded).
 */
import { readFile } from 'node:fs/promises';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { w3cTraceIdFor } from '../../src/adapters/http';
import { createProviderRegistry } from '../../src/adapters/providers/registry';
import { createActivities, type AsyncJobActivities } from '../../src/activities';
import { pacingInterceptor, RequestPacer } from '../../src/activities/request-pacer';
import { operationRecordSchema, type OperationRecord } from '../../src/core/operation';
import { type StepEntry } from '../../src/core/step';
import { foldOutcome, outcomeOfRecord, withoutTails, type StepOutcome } from '../../src/core/step-outcome';
import { DIALECTS, TOKEN, newRecord, newStart, reserveStatus, run, startHarness, step, type Harness } from './harness';

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ApplicationFailure);
    return error as ApplicationFailure;
  }
  throw new Error('expected the activity to fail');
}

describe.each(DIALECTS)('activities against the %s simulator', (dialect) => {
  let h: Harness;
  let a: AsyncJobActivities;
  const caps = () => ({
    capabilities: h.registry.get(dialect).facts.capabilities,
    reconciliation: h.registry.get(dialect).facts.reconciliation,
  });

  beforeAll(async () => {
    h = await startHarness(dialect);
    a = h.activities;
  });
  afterAll(async () => h?.close());

  /** recordIntent + createJob for a new operation with the given payload. */
  async function started(
    payload: Record<string, unknown>,
  ): Promise<{ record: OperationRecord; payload: Record<string, unknown> }> {
    const record = await step(a.recordIntent, { record: newRecord(dialect, payload) });
    const created = await step(a.createJob, { record, random: 0.5, payload });
    return { record: created, payload };
  }

  /** Reads status until the record leaves the polling states (bounded). */
  async function pollToEnd(record: OperationRecord): Promise<OperationRecord> {
    let r = record;
    for (let i = 0; i < 30 && (r.localState === 'accepted' || r.localState === 'observing'); i++) {
      r = await step(a.readStatus, { record: await reserveStatus(r, caps()), random: 0.5 });
    }
    return r;
  }

  /**
   * Activities whose clock is just before `deadlineMs` until the adapter builds its request with `build`, and at it
   * from then on: whatever passes between building and writing (a session read, a pacer's turn, a connection, a
   * queue) is where a request is overtaken.
   */
  function overtakenOnceBuilt(build: 'buildStatusRequest' | 'buildCreateRequest', deadlineMs: number) {
    let built = false;
    const real = h.registry.get(dialect);
    const adapter = Object.create(real.adapter, {
      [build]: {
        value: (facts: unknown) => {
          built = true;
          return (real.adapter[build] as (facts: unknown) => unknown).call(real.adapter, facts);
        },
      },
    }) as typeof real.adapter;
    const providers = Object.create(h.registry, { get: { value: () => ({ ...real, adapter }) } }) as typeof h.registry;
    const activities = createActivities({
      store: h.store,
      providers,
      artifacts: h.artifacts,
      clock: () => (built ? deadlineMs : deadlineMs - 1),
    });
    return { activities, built: () => built };
  }

  it('S3: a status read the deadline overtakes between its check and its write is not written; the deadline stops the wait', async () => {
    const { record } = await started({ report: 'overtaken', scenario: 'default' });
    const reserved = await reserveStatus(record, caps());
    const overtaken = overtakenOnceBuilt('buildStatusRequest', reserved.deadlines.resultDeadlineMs);
    const readsBefore = h.sim.requests({ action: 'status' }).length;
    const after = await step(overtaken.activities.readStatus, { record: reserved, random: 0.5 });
    expect(overtaken.built()).toBe(true);
    expect(h.sim.requests({ action: 'status' })).toHaveLength(readsBefore);
    expect(after.localState).toBe('escalated');
    expect(after.escalation?.reason).toBe('deadline_exceeded');
    // B2: the reservation stays counted, and nothing more than it.
    expect(after.used.statusRequests).toBe(reserved.used.statusRequests);
  });

  it('I3: a create the create deadline overtakes between its reservation and its write is not written; the operation stops there', async () => {
    const payload = { report: 'create-overtaken', scenario: 'default' };
    const record = await step(a.recordIntent, { record: newRecord(dialect, payload) });
    // Reserved before the deadline; the deadline comes while the request waits to be written (a queue, a turn).
    const overtaken = overtakenOnceBuilt('buildCreateRequest', record.deadlines.createDeadlineMs);
    const after = await step(overtaken.activities.createJob, { record, random: 0.5, payload });
    expect(overtaken.built()).toBe(true);
    expect(h.sim.requests({ action: 'create', idempotencyKey: record.idempotencyToken })).toHaveLength(0);
    expect(h.sim.jobsByToken(record.idempotencyToken)).toHaveLength(0);
    expect(after.localState).toBe('escalated');
    expect(after.escalation?.reason).toBe('deadline_exceeded');
    expect(after.escalation?.message.detail).toContain('before any create request reached the provider');
  });

  it('B2, U1: a create that fails before its write says nothing was sent (no send slot: the fleet store unreachable); one that fails after it does not', async () => {
    const payload = { report: 'no-send-slot', scenario: 'default' };
    const record = await step(a.recordIntent, { record: newRecord(dialect, payload) });
    const { state } = outcomeOfRecord(record);
    const input = { state, random: 0.5, payload };
    // The provider's queue is rate-limited fleet-wide and PostgreSQL, which hands out the send slots, is down.
    const unreachable = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    const paced = new MockActivityEnvironment(
      {},
      { interceptors: [pacingInterceptor(new RequestPacer(50), unreachable)] },
    );
    const unsent = await failureOf(paced.run(a.createJob, input));
    expect(unsent).toMatchObject({ type: 'ASYNCJOB_ERR_NOTHING_SENT', nonRetryable: false });
    expect(unsent.message).toContain('nothing was sent: connect ECONNREFUSED 127.0.0.1:5432');
    expect(h.sim.requests({ action: 'create', idempotencyKey: record.idempotencyToken })).toHaveLength(0);
    // The create is written, then the store fails to record its answer: it may have created a job.
    const store = Object.create(h.store, {
      appendWithSnapshot: { value: () => Promise.reject(new Error('connection terminated unexpectedly')) },
    }) as typeof h.store;
    const lost = createActivities({ store, providers: h.registry, artifacts: h.artifacts });
    const maybe = await failureOf(run(lost.createJob, input));
    expect(maybe.type).toBe('ASYNCJOB_ERR_ACTIVITY_FAILED');
    expect(h.sim.requests({ action: 'create', idempotencyKey: record.idempotencyToken })).toHaveLength(1);
  });

  it.skipIf(dialect !== 'rest')(
    'M3, P4: a collect another writer recorded first while the status activity collected: the stored state stands, nothing fails',
    async () => {
      const { record: reserved } = await started({ report: 'raced', scenario: 'default' });
      // The other writer (an attempt timed out and replaced, still running on a cut-off worker) collects and records
      // first, while this activity's collect begins its artifact.
      let raced = false;
      const artifacts = Object.create(h.artifacts, {
        begin: {
          value: async (operationId: string, name: string) => {
            if (!raced) {
              raced = true;
              const stored = (await h.store.getOperation(operationId))!.record as unknown as OperationRecord;
              await step(a.collectResult, { record: stored, random: 0.5 });
            }
            return h.artifacts.begin(operationId, name);
          },
        },
      }) as typeof h.artifacts;
      const live = createActivities({ store: h.store, providers: h.registry, artifacts });
      // As the workflow does: the status activity again while the operation polls (the first read leaves `accepted`).
      let state = withoutTails(reserved);
      for (let i = 0; i < 5 && (state.localState === 'accepted' || state.localState === 'observing'); i++) {
        const loop = { maxWaitMs: 30_000, maxLoopMs: 60_000 };
        state = (await run(live.pollStatus, { state, random: 0.5, loop })).state;
      }
      expect(raced).toBe(true);
      expect(state.localState).toBe('succeeded');
      const collects = (await h.store.entries(reserved.operationId)).filter(
        ({ entry }) => entry.body.kind === 'observation' && entry.body.action === 'collect',
      );
      expect(collects).toHaveLength(1);
      expect((await h.store.verifyChains({ operationId: reserved.operationId })).breaks).toEqual([]);
    },
  );

  it.skipIf(dialect !== 'rest')(
    'M3, B2: a read another writer recorded first while the status activity read: the stored state stands, nothing fails',
    async () => {
      const { record } = await started({ report: 'read-raced', scenario: 'default' });
      const reserved = await reserveStatus(record, caps());
      // The other writer (an attempt timed out and replaced, still running on a cut-off worker) reads with the same
      // reservation and records its answer first, while this activity's answer is on its way to the store.
      let raced = false;
      const store = Object.create(h.store, {
        appendWithSnapshot: {
          value: async (...args: Parameters<typeof h.store.appendWithSnapshot>) => {
            const [entries] = args;
            if (!raced && entries.some((e) => e.body.kind === 'observation' && e.body.action === 'status')) {
              raced = true;
              await step(a.readStatus, { record: reserved, random: 0.25 });
            }
            return h.store.appendWithSnapshot(...args);
          },
        },
      }) as typeof h.store;
      const live = createActivities({ store, providers: h.registry, artifacts: h.artifacts });
      const loop = { maxWaitMs: 30_000, maxLoopMs: 60_000 };
      const outcome = await run(live.pollStatus, { state: withoutTails(reserved), random: 0.5, loop });
      expect(raced).toBe(true);
      const stored = (await h.store.getOperation(reserved.operationId))!.record as unknown as OperationRecord;
      expect(outcome.state.journal.nextSequence).toBe(stored.journal.nextSequence);
      const reads = (await h.store.entries(reserved.operationId)).filter(
        ({ entry }) => entry.body.kind === 'observation' && entry.body.action === 'status',
      );
      expect(reads).toHaveLength(1);
      expect((await h.store.verifyChains({ operationId: reserved.operationId })).breaks).toEqual([]);
    },
  );

  it('C1, I1, I3: a repeated createJob returns the stored record and sends nothing; the token is where the dialect expects it', async () => {
    const payload = { report: 'q3', scenario: 'default' };
    const record = await step(a.recordIntent, { record: newRecord(dialect, payload) });
    const first = await step(a.createJob, { record, random: 0.5, payload });
    expect(first.localState).toBe('accepted');
    expect(first.jobId).toBeDefined();
    const again = await step(a.createJob, { record, random: 0.1, payload });
    expect(again).toEqual(first);
    const creates = h.sim.requests({ action: 'create', idempotencyKey: record.idempotencyToken });
    expect(creates).toHaveLength(1);
    expect(h.sim.jobsByToken(record.idempotencyToken)).toHaveLength(1);
    // The simulator reads the token only from the dialect's place (Idempotency-Key, request_id, Repeatability-Request-ID).
    expect(creates[0]!.idempotencyKey).toBe(record.idempotencyToken);
    const stored = await h.store.getOperation(record.operationId);
    // The snapshot keeps no journal tails: the journal beside it holds every entry.
    expect(operationRecordSchema.parse(stored?.record)).toEqual(withoutTails(first));
    expect(stored?.version).toBe(first.journal.nextSequence - 1);
  });

  it('P4, B2: given its loop, createJob reads on and collects in the same activity, each read reserved first; a repeat sends nothing', async () => {
    const since = h.sim.requests().at(-1)?.seq ?? 0;
    const payload = { report: 'reads-on', scenario: 'default' };
    const record = await step(a.recordIntent, { record: newRecord(dialect, payload) });
    const loop = { maxWaitMs: 30_000, maxLoopMs: 60_000 };
    const done = await step(a.createJob, { record, random: 0.5, payload, loop });
    expect(done.localState).toBe('succeeded');
    expect(done.result?.validation).toBe('valid');
    const requests = h.sim.requests({ sinceSeq: since });
    expect(requests.map((r) => r.action).filter((action, i, all) => action !== all[i - 1])).toEqual([
      'create',
      'status',
      'result',
    ]);
    // Every read is in the journal as its own observation, with the transitions the workflow would have recorded.
    const entries = (await h.store.entries(record.operationId)).map((e) => e.entry.body);
    const reads = entries.filter((body) => body.kind === 'observation' && body.action === 'status');
    expect(reads).toHaveLength(requests.filter((r) => r.action === 'status').length);
    expect((await h.store.verifyChains({ operationId: record.operationId })).breaks).toEqual([]);
    // Temporal's retry of the same create (the same record) finds it all recorded: nothing is sent again.
    const again = await step(a.createJob, { record, random: 0.1, payload, loop });
    expect(again.localState).toBe('succeeded');
    expect(h.sim.requests({ sinceSeq: since })).toHaveLength(requests.length);
  });

  it('a createJob given malformed loop limits is refused before anything is sent', async () => {
    const since = h.sim.requests().at(-1)?.seq ?? 0;
    const payload = { report: 'bad-loop', scenario: 'default' };
    const record = await step(a.recordIntent, { record: newRecord(dialect, payload) });
    const failure = await failureOf(
      step(a.createJob, { record, random: 0.5, payload, loop: { maxWaitMs: -1, maxLoopMs: 60_000 } }),
    );
    expect(failure.type).toBe('ASYNCJOB_ERR_INVALID_INPUT');
    expect(failure.message).toMatch(/loop\.maxWaitMs/);
    expect(h.sim.requests({ sinceSeq: since })).toEqual([]);
  });

  it('C2, P1, R1, R2, T1: the whole lifecycle, trace headers on every request and the checksum verified', async () => {
    const since = h.sim.requests().at(-1)?.seq ?? 0;
    const { record } = await started({ report: 'lifecycle', scenario: 'default' });
    const done = await pollToEnd(record);
    expect(done.localState).toBe('result_collecting');
    const collected = await step(a.collectResult, { record: done, random: 0.5 });
    expect(collected.localState).toBe('succeeded');
    expect(collected.result?.validation).toBe('valid');
    const artifact = await h.artifacts.describe(collected.result!.artifactLocation!);
    expect(artifact?.sha256).toBe(collected.result?.sha256);
    expect(JSON.parse((await readFile(new URL(collected.result!.artifactLocation!))).toString('utf8'))).toEqual({
      rows: [1, 2, 3],
    });
    const requests = h.sim.requests({ sinceSeq: since });
    expect(requests[0]?.action).toBe('create');
    expect(requests.at(-1)?.action).toBe('result');
    expect(requests.filter((r) => r.action === 'status').length).toBeGreaterThanOrEqual(2);
    expect(requests.filter((r) => r.action === 'create')).toHaveLength(1);
    expect(requests.filter((r) => r.action === 'result')).toHaveLength(1);
    for (const r of requests) {
      expect(r.traceId).toBe(record.traceId);
      expect(r.traceparent).toMatch(new RegExp(`^00-${w3cTraceIdFor(record.traceId)}-[0-9a-f]{16}-01$`));
      expect(r.authorization).toBe('valid');
    }
    const kinds = (await h.store.entries(record.operationId)).map((e) => e.entry.body.kind);
    expect(kinds[0]).toBe('intent');
    expect(kinds).toContain('artifact');
    // Collecting again with the same record is the recorded outcome, not a second download.
    expect(await step(a.collectResult, { record: done, random: 0.5 })).toEqual(collected);
    expect(h.sim.requests({ sinceSeq: since, action: 'result' })).toHaveLength(1);
  });

  it('U1, U2, F1: a dropped create answer is reconciled to the same job; one provider job', async () => {
    const payload = { report: 'dropped', scenario: 'drop' };
    const record = await step(a.recordIntent, { record: newRecord(dialect, payload) });
    const created = await step(a.createJob, { record, random: 0.5, payload });
    expect(created.jobId).toBeUndefined();
    expect(['reconciliation', 'create_unknown']).toContain(created.localState);
    expect(created.journal.observations.at(-1)?.body.transport).toBe('ambiguous');
    let r = created;
    for (let i = 0; i < 10 && r.jobId === undefined && r.localState !== 'escalated'; i++)
      r = await step(a.reconcileJob, { record: r, random: 0.5, payload });
    expect(r.localState).toBe('accepted');
    const jobs = h.sim.jobsByToken(record.idempotencyToken);
    expect(jobs).toHaveLength(1);
    expect([jobs[0]!.jobId, jobs[0]!.rawId]).toContain(r.jobId);
  });

  it('C1: without a recorded intent createJob refuses and sends nothing', async () => {
    const payload = { report: 'no-intent' };
    const record = newRecord(dialect, payload);
    const failure = await failureOf(step(a.createJob, { record, random: 0.5, payload }));
    expect(failure.type).toBe('ASYNCJOB_ERR_INTENT_MISSING');
    expect(failure.nonRetryable).toBe(true);
    expect(h.sim.requests({ idempotencyKey: record.idempotencyToken })).toHaveLength(0);
  });

  it('I2: a changed payload is refused by createJob and by recordIntent under the same operation ID', async () => {
    const payload = { report: 'original' };
    const record = await step(a.recordIntent, { record: newRecord(dialect, payload) });
    const failure = await failureOf(step(a.createJob, { record, random: 0.5, payload: { report: 'changed' } }));
    expect(failure.type).toBe('ASYNCJOB_ERR_FINGERPRINT_MISMATCH');
    expect(failure.nonRetryable).toBe(true);
    expect(h.sim.requests({ idempotencyKey: record.idempotencyToken })).toHaveLength(0);
    const other = newRecord(dialect, { report: 'changed' }, { operationId: record.operationId });
    const refused = await failureOf(step(a.recordIntent, { record: other }));
    expect(refused.type).toBe('ASYNCJOB_ERR_FINGERPRINT_MISMATCH');
    expect(refused.nonRetryable).toBe(true);
    // The same request again joins: the stored record comes back.
    const same = newRecord(dialect, payload, { operationId: record.operationId });
    expect(await step(a.recordIntent, { record: same })).toEqual(record);
  });

  it('P3, H5: a 503 with Retry-After schedules the next read no earlier than it says', async () => {
    const { record } = await started({ report: 'busy', scenario: 'unavailable' });
    const reserved = await reserveStatus(record, caps());
    const before = Date.now();
    const after = await step(a.readStatus, { record: reserved, random: 0 });
    const seen = after.journal.observations.at(-1)!;
    expect(seen.body.httpStatus).toBe(503);
    expect(after.schedule.delaySource).toBe('provider_retry_after');
    expect(after.schedule.nextPollAtMs!).toBeGreaterThanOrEqual(before + 7_000);
    expect(after.used.transportFailures).toBe(1);
  });

  it('P1, E1: a state outside the table escalates as unknown_state', async () => {
    const { record } = await started({ report: 'review', scenario: 'review' });
    const end = await pollToEnd(record);
    expect(end.localState).toBe('escalated');
    expect(end.escalation?.reason).toBe('unknown_state');
    expect((await h.store.getOperation(record.operationId))?.escalationReason).toBe('unknown_state');
  });

  it('R2, R4: a checksum mismatch is result_validation_failed, the artifact kept and marked invalid', async () => {
    const { record } = await started({ report: 'mismatch', scenario: 'mismatch' });
    const ready = await pollToEnd(record);
    expect(ready.localState).toBe('result_collecting');
    const collected = await step(a.collectResult, { record: ready, random: 0.5 });
    expect(collected.localState).toBe('escalated');
    expect(collected.escalation?.reason).toBe('result_validation_failed');
    expect(collected.result?.validation).toBe('invalid');
    expect(collected.result?.problems?.join(' ')).toMatch(/checksum mismatch/);
    const artifacts = await h.store.artifacts(record.operationId);
    expect(artifacts.map((x) => x.validation)).toEqual(['invalid']);
  });

  it('R4: a truncated download is stored, judged invalid and escalated', async () => {
    const { record } = await started({ report: 'cut', scenario: 'truncated' });
    const ready = await pollToEnd(record);
    const collected = await step(a.collectResult, { record: ready, random: 0.5 });
    expect(collected.result?.validation).toBe('invalid');
    expect(collected.result?.problems?.join(' ')).toMatch(/truncated/);
    expect(collected.escalation?.reason).toBe('result_validation_failed');
  });

  it('R3: a batch result is counted and its failed items listed', async () => {
    const { record } = await started({ report: 'batch', scenario: 'batch' });
    const ready = await pollToEnd(record);
    const collected = await step(a.collectResult, { record: ready, random: 0.5 });
    const batchRules = h.registry.get(dialect).adapter.contract?.result.batch;
    if (batchRules === undefined) {
      expect(collected.result?.failedItemCount).toBeUndefined();
      return;
    }
    expect(collected.localState).toBe('succeeded');
    expect(collected.result?.recordCount).toBe(5);
    expect(collected.result?.failedItemCount).toBe(2);
    expect(collected.result?.failedItems).toHaveLength(2);
    const artifactEntry = (await h.store.entries(record.operationId))
      .map((e) => e.entry.body)
      .find((b) => b.kind === 'artifact');
    expect(artifactEntry).toMatchObject({ kind: 'artifact', recordCount: 5 });
  });

  it('R3: an NDJSON result has its records counted', async () => {
    const { record } = await started({ report: 'lines', scenario: 'ndjson' });
    const ready = await pollToEnd(record);
    const collected = await step(a.collectResult, { record: ready, random: 0.5 });
    expect(collected.localState).toBe('succeeded');
    expect(collected.result?.recordCount).toBe(4);
  });

  it('C4: a foreign Location or result URL is never requested, least of all with the credential', async () => {
    const created = await started({ report: 'foreign', scenario: 'foreign' });
    if (dialect !== 'lro') {
      // The lro create answer names no URL; the others point at the foreign origin and prove nothing (C2, C4).
      expect(created.record.localState).toBe('escalated');
      expect(created.record.journal.observations.at(-1)?.body.errorCategory).toBe('foreign_origin');
    }
    const other = await started({ report: 'foreign-status', scenario: 'foreignStatus' });
    let r = other.record;
    for (let i = 0; i < 5 && (r.localState === 'accepted' || r.localState === 'observing'); i++)
      r = await step(a.readStatus, { record: await reserveStatus(r, caps()), random: 0.5 });
    if (r.localState === 'result_collecting') r = await step(a.collectResult, { record: r, random: 0.5 });
    expect(r.localState).toBe('escalated');
    expect(r.journal.observations.at(-1)?.body).toMatchObject({ action: 'status', errorCategory: 'foreign_origin' });
    expect(h.foreign.seen).toEqual([]);
    expect(h.sim.requests().filter((x) => x.authorization !== 'valid' && x.action !== 'sim')).toEqual([]);
  });

  it('X1: the cancel is sent once; a retried requestCancel sends nothing more', async () => {
    if (!h.registry.get(dialect).facts.capabilities.cancel) return;
    const since = h.sim.requests().at(-1)?.seq ?? 0;
    const { record } = await started({ report: 'cancel', scenario: 'review' });
    const asked = {
      ...record,
      localState: 'cancel_requested' as const,
      cancel: {
        requestedBy: 'alice@example.com',
        reason: 'not needed',
        expectedEffect: 'the provider stops the job',
        requestedAtMs: Date.now(),
      },
    };
    const sent = await step(a.requestCancel, { record: asked, random: 0.5 });
    expect(sent.localState).toBe('cancelling');
    expect(await step(a.requestCancel, { record: asked, random: 0.5 })).toEqual(sent);
    expect(h.sim.requests({ action: 'cancel', sinceSeq: since })).toHaveLength(1);
  });

  it('C3: a synchronous success goes straight to collecting and is verified', async () => {
    const { record } = await started({ report: 'sync', scenario: 'sync' });
    if (dialect === 'operation-location') {
      // This dialect always answers 202 + Operation-Location.
      expect(record.localState).toBe('accepted');
      return;
    }
    expect(record.localState).toBe('result_collecting');
    expect(record.journal.transitions.at(-1)?.body).toMatchObject({ from: 'create_pending', to: 'result_collecting' });
    const collected = await step(a.collectResult, { record, random: 0.5 });
    expect(collected.localState).toBe('succeeded');
    expect(collected.result).toMatchObject({ validation: 'valid', recordCount: 1, sizeBytes: 16 });
  });

  it('C3, P4: given its loop, a create answered with the finished job is collected in the same activity', async () => {
    if (dialect === 'operation-location') return; // This dialect always answers 202 + Operation-Location.
    const payload = { report: 'sync-reads-on', scenario: 'sync' };
    const record = await step(a.recordIntent, { record: newRecord(dialect, payload) });
    const done = await step(a.createJob, {
      record,
      random: 0.5,
      payload,
      loop: { maxWaitMs: 30_000, maxLoopMs: 60_000 },
    });
    expect(done.localState).toBe('succeeded');
    expect(done.result).toMatchObject({ validation: 'valid', recordCount: 1, sizeBytes: 16 });
    expect(h.sim.requests({ action: 'status', jobId: done.jobId })).toEqual([]);
  });

  it('S2, F8: an HTML status answer becomes a classified observation, not a crash, and polling goes on', async () => {
    const { record } = await started({ report: 'html', scenario: 'malformed' });
    const after = await step(a.readStatus, { record: await reserveStatus(record, caps()), random: 0.5 });
    const seen = after.journal.observations.at(-1)!.body;
    expect(seen).toMatchObject({ action: 'status', transport: 'response', httpStatus: 200 });
    expect(seen.remoteState).toBeUndefined();
    expect(after.localState).not.toBe('succeeded');
    if (after.localState === 'accepted' || after.localState === 'observing')
      expect((await pollToEnd(after)).localState).toBe('result_collecting');
  });

  it('R2: a large result is streamed to the artifact store with heartbeats', async () => {
    const { record } = await started({ report: 'large', scenario: 'large' });
    const ready = await pollToEnd(record);
    const env = new MockActivityEnvironment();
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    const outcome: StepOutcome = await env.run(a.collectResult, { state: withoutTails(ready), random: 0.5 });
    const collected: OperationRecord = foldOutcome(ready, outcome);
    expect(collected.localState).toBe('succeeded');
    expect(collected.result?.sizeBytes).toBe(3_500_000);
    expect(beats.length).toBeGreaterThanOrEqual(3);
    const artifact = await h.artifacts.describe(collected.result!.artifactLocation!);
    expect(artifact).toMatchObject({ sizeBytes: 3_500_000, sha256: collected.result?.sha256 });
  });

  it('T4: the bearer token is in neither the SQLite file nor the logs', async () => {
    const bytes = await readFile(h.dbPath);
    const wal = await readFile(`${h.dbPath}-wal`).catch(() => Buffer.alloc(0));
    expect(h.logger.lines.length).toBeGreaterThan(0);
    for (const haystack of [bytes, wal, Buffer.from(h.logger.lines.join('\n'))]) {
      expect(haystack.includes(TOKEN)).toBe(false);
      expect(haystack.includes(Buffer.from(TOKEN).toString('base64'))).toBe(false);
    }
  });
});

describe('a result above the parse limit', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('rest', { maxParseBytes: 64 });
  });
  afterAll(async () => h?.close());

  it('R3: is checked by checksum and size, and its record count is noted not_checked rather than loaded', async () => {
    const payload = { report: 'big-batch', scenario: 'batch' };
    const record = await step(h.activities.recordIntent, { record: newRecord('rest', payload) });
    const ready = await step(h.activities.createJob, { record, random: 0.5, payload });
    expect(ready.localState).toBe('result_collecting');
    const collected = await step(h.activities.collectResult, { record: ready, random: 0.5 });
    expect(collected.localState).toBe('succeeded');
    expect(collected.result?.validation).toBe('valid');
    expect(collected.result?.recordCount).toBeUndefined();
    expect(collected.result?.problems?.some((p) => p.startsWith('not_checked'))).toBe(true);
    expect(collected.result?.sizeBytes).toBeGreaterThan(64);
  });
});

describe('activities without a provider answer', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('rest');
  });
  afterAll(async () => h?.close());

  it('H4: a 401 on create escalates as authorization_denied, with no retry', async () => {
    const registry = await createProviderRegistry({
      providers: [{ name: 'rest', path: 'rest' }],
      baseUrls: { rest: h.sim.url },
      env: { ASYNCJOB_SIMULATOR_TOKEN: 'a-wrong-token-0123456789' },
    });
    try {
      const activities = createActivities({ store: h.store, providers: registry, artifacts: h.artifacts });
      const payload = { report: 'denied' };
      const since = h.sim.requests().at(-1)?.seq ?? 0;
      const record = await step(activities.recordIntent, { record: newRecord('rest', payload) });
      const after = await step(activities.createJob, { record, random: 0.5, payload });
      expect(after.localState).toBe('escalated');
      expect(after.escalation?.reason).toBe('authorization_denied');
      expect(h.sim.requests({ sinceSeq: since }).map((r) => [r.method, r.path, r.status, r.authorization])).toEqual([
        ['POST', '/v1/jobs', 401, 'invalid'],
      ]);
      // Given its loop, a create that leaves no job to poll returns the same at once: nothing is read.
      const again = await step(activities.recordIntent, { record: newRecord('rest', payload) });
      const loop = { maxWaitMs: 30_000, maxLoopMs: 60_000 };
      const denied = await step(activities.createJob, { record: again, random: 0.5, payload, loop });
      expect(denied).toMatchObject({ localState: 'escalated', escalation: { reason: 'authorization_denied' } });
      expect(h.sim.requests({ sinceSeq: since }).map((r) => r.method)).toEqual(['POST', 'POST']);
    } finally {
      await registry.close();
    }
  });

  it('U2, U3: several jobs under one client reference are never read as "no job was created"', async () => {
    const clientReference = 'shared-reference-1';
    for (const report of ['first', 'second']) {
      const payload = { report };
      const record = await step(h.activities.recordIntent, { record: newRecord('rest', payload, { clientReference }) });
      expect((await step(h.activities.createJob, { record, random: 0.5, payload })).localState).toBe('accepted');
    }
    const payload = { report: 'third', scenario: 'drop' };
    const record = await step(h.activities.recordIntent, { record: newRecord('rest', payload, { clientReference }) });
    const unknown = await step(h.activities.createJob, { record, random: 0.5, payload });
    expect(unknown.localState).toBe('reconciliation');
    // Past the create deadline, a list without our job would prove that none was created: several must not.
    const later = createActivities({
      store: h.store,
      providers: h.registry,
      artifacts: h.artifacts,
      clock: () => Date.now() + 120_000,
    });
    const after = await step(later.reconcileJob, { record: unknown, random: 0.5, payload });
    expect(after.jobId).toBeUndefined();
    expect(after.localState).not.toBe('failed');
    expect(after.localState).not.toBe('accepted');
    expect(after.journal.observations.at(-1)?.body).toMatchObject({
      action: 'reconcile',
      httpStatus: 200,
      errorCategory: 'multiple_matches',
    });
  });

  it('an unknown provider is a non-retryable ASYNCJOB_ERR_PROVIDER_UNKNOWN', async () => {
    const failure = await failureOf(run(h.activities.describeProvider, { provider: 'nope' }));
    expect(failure.type).toBe('ASYNCJOB_ERR_PROVIDER_UNKNOWN');
    expect(failure.nonRetryable).toBe(true);
    const facts = await run(h.activities.describeProvider, { provider: 'rest' });
    expect(facts).toEqual({
      name: 'rest',
      capabilities: { cancel: true, repeatableCollect: true, sameTokenResend: true },
      reconciliation: 'list_by_client_reference',
      policy: { notFoundWindowMs: 5000 },
      // P4: the worker's status loop (core/poll-loop.ts), on by default, its longer waits retries of its activity.
      pollLoop: { maxWaitMs: 30_000, maxLoopMs: 120_000, retryWaits: true, createReadsOn: true },
    });
  });

  it('C1: given the start, describeProvider records its intent under the provider tuning, once, and joins when retried', async () => {
    // The request's own policy without the harness's notFoundWindowMs, so the provider's tuning shows through.
    const start = newStart('rest', { report: 'lookup' }, { policy: { baseDelayMs: 1, maxDelayMs: 5 } });
    const { recorded, ...facts } = await run(h.activities.describeProvider, { provider: 'rest', start });
    expect(facts).toEqual(await run(h.activities.describeProvider, { provider: 'rest' }));
    const state = recorded!.outcome.state;
    // The provider's tuning under the request's own policy, as the workflow's record takes it.
    expect(state.policy).toMatchObject({ baseDelayMs: 1, maxDelayMs: 5, notFoundWindowMs: 5000 });
    expect(state.localState).toBe('create_pending');
    expect(recorded!.variableIssues).toBeUndefined();
    const stored = await h.store.entries(state.operationId, { fromSequence: 1 });
    expect(stored.map((row) => row.entry.body.kind)).toEqual(['intent', 'transition']);
    // A retry of the local activity after the intent was written joins it: nothing is written twice.
    const again = await run(h.activities.describeProvider, { provider: 'rest', start });
    expect(again.recorded!.outcome.state).toEqual(state);
    expect(await h.store.entries(state.operationId, { fromSequence: 1 })).toHaveLength(2);
    const elsewhere = { ...start, request: { ...start.request, provider: 'lro' } };
    const mismatch = await failureOf(run(h.activities.describeProvider, { provider: 'rest', start: elsewhere }));
    expect(mismatch.type).toBe('ASYNCJOB_ERR_INVALID_INPUT');
    expect(mismatch.nonRetryable).toBe(true);
  });

  it('C1: a malformed start is refused, naming each bad field, before anything is recorded', async () => {
    const start = newStart('rest', { report: 'malformed start' });
    const malformed = { ...start, startedAtMs: -1, traceId: 7 } as unknown as typeof start;
    const failure = await failureOf(run(h.activities.describeProvider, { provider: 'rest', start: malformed }));
    expect(failure.type).toBe('ASYNCJOB_ERR_INVALID_INPUT');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('startedAtMs:');
    expect(failure.message).toContain('traceId:');
    expect(await h.store.entries(start.request.operationId, { fromSequence: 1 })).toEqual([]);
  });

  it('M3: appendJournal is a no-op for the same entries and adopts the stored record for different ones', async () => {
    const record = await step(h.activities.recordIntent, { record: newRecord('rest', { report: 'journal' }) });
    const seq = record.journal.nextSequence;
    const entry = (reason: string) => ({
      sequence: seq,
      atMs: Date.now(),
      actor: 'workflow',
      body: {
        kind: 'decision' as const,
        decision: 'inspect_provider_console',
        approvedBy: 'alice@example.com',
        reason,
        accepted: true,
      },
    });
    const mine = entry('first');
    const next = withoutTails({ ...record, journal: { ...record.journal, nextSequence: seq + 1 } });
    // What comes back is the state and the step's entries the tails keep (none of this kind), each time.
    const append = (state: OperationRecord, entries: StepEntry[]) =>
      run(h.activities.appendJournal, { state, entries });
    expect(await append(next, [mine])).toEqual({ state: next, entries: [] });
    expect(await append(next, [mine])).toEqual({ state: next, entries: [] });
    // Different entries at a recorded sequence: the stored state and its entries from there are adopted.
    const theirs = { ...next, authorisation: { ...next.authorisation, approvals: [] }, schedule: { nextPollAtMs: 1 } };
    const adopted = await append(theirs, [entry('second')]);
    expect(adopted.state).toEqual(next);
    expect(adopted.entries.every((e) => e.sequence >= seq)).toBe(true);
    expect((await h.store.entries(record.operationId)).filter((e) => e.entry.sequence === seq)).toHaveLength(1);
  });
});
