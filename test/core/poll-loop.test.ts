import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NO_CAPABILITIES } from '../../src/core/escalation';
import { type OperationRecord } from '../../src/core/operation';
import {
  CREATE_READS_ON_MS,
  DEFAULT_POLL_LOOP_LIMITS,
  SHOWN_COPY_REFRESH_MS,
  SHOWN_COPY_REFRESH_READS,
  pendingReadDetails,
  pendingReadSummary,
  withPendingRead,
  handedBackUnread,
  loopTakesWait,
  retryDelayAfter,
  statusActivityLimits,
  statusHeartbeatTimeoutMs,
  retryTakesWait,
  storeIsAhead,
  nextLoopStep,
  pollLoopLimitsSchema,
  readNowForWebhook,
  readOnAfterCreateLimits,
  webhookMovesReadToNow,
} from '../../src/core/poll-loop';
import { afterStatus, applyWebhookHint } from '../../src/core/step';
import { effectiveDeadlineMs } from '../../src/core/wait-planner';
import { T0, newRecord, obs, observingRecord } from './helpers';

const LIMITS = { maxWaitMs: 30_000, maxLoopMs: 120_000 };

/** An observing record whose next read is planned at `nextPollAtMs` (no reservation open). */
function waitingUntil(nextPollAtMs: number, delaySource: 'local_backoff' | 'provider_retry_after' = 'local_backoff') {
  return { ...observingRecord(), schedule: { nextPollAtMs, delaySource } } satisfies OperationRecord;
}

describe('the status loop keeps an operation only while its waits are short (P4, P5)', () => {
  it('P4: a read due now is read; a short wait is waited in the loop; a long one goes back to a durable timer', () => {
    const now = T0 + 10_000;
    expect(nextLoopStep(waitingUntil(now - 1), now, { startedAtMs: now, entered: observingRecord() }, LIMITS)).toEqual({
      kind: 'read',
    });
    expect(
      nextLoopStep(waitingUntil(now + 5_000), now, { startedAtMs: now, entered: observingRecord() }, LIMITS),
    ).toEqual({ kind: 'wait', untilMs: now + 5_000 });
    expect(
      nextLoopStep(waitingUntil(now + 30_000), now, { startedAtMs: now, entered: observingRecord() }, LIMITS),
    ).toEqual({ kind: 'wait', untilMs: now + 30_000 });
    expect(
      nextLoopStep(waitingUntil(now + 30_001), now, { startedAtMs: now, entered: observingRecord() }, LIMITS),
    ).toEqual({ kind: 'exit', reason: 'long_wait' });
  });

  it('P4: the loop hands the operation back once it has kept it for maxLoopMs', () => {
    const started = T0;
    const now = T0 + 118_000;
    expect(
      nextLoopStep(waitingUntil(now + 2_000), now, { startedAtMs: started, entered: observingRecord() }, LIMITS),
    ).toMatchObject({ kind: 'wait' });
    expect(
      nextLoopStep(waitingUntil(now + 2_001), now, { startedAtMs: started, entered: observingRecord() }, LIMITS),
    ).toEqual({
      kind: 'exit',
      reason: 'loop_time_spent',
    });
  });

  it.each(['cancelling', 'result_collecting', 'succeeded', 'failed', 'escalated', 'cancel_requested'] as const)(
    'P5: an operation in %s goes back to the workflow (messages, collect and cancels are its steps)',
    (localState) => {
      const record = { ...waitingUntil(T0 + 1_000), localState };
      expect(nextLoopStep(record, T0, { startedAtMs: T0, entered: observingRecord() }, LIMITS)).toEqual({
        kind: 'exit',
        reason: 'state_changed',
      });
    },
  );

  /** `record` after `reads` more status reads than `entered`. */
  function readMore(record: OperationRecord, reads: number): OperationRecord {
    return { ...record, used: { ...record.used, statusRequests: record.used.statusRequests + reads } };
  }

  it("P8: accepted to observing, the provider's word (queued to running) and progress go back once the workflow's copy is SHOWN_COPY_REFRESH_READS reads and SHOWN_COPY_REFRESH_MS old, not before", () => {
    const entered = { ...waitingUntil(T0 + 5_000), remote: { ...observingRecord().remote, state: 'queued' } };
    const loop = { startedAtMs: T0, entered };
    const moves = [
      { ...entered, localState: 'accepted' as const },
      { ...entered, remote: { ...entered.remote, state: 'running' } },
      { ...entered, remote: { ...entered.remote, progress: 0.4 } },
    ];
    for (const moved of moves) {
      const enteredAs = moved.localState === 'accepted' ? { ...loop, entered: moved } : loop;
      const now = moved.localState === 'accepted' ? entered : moved;
      const due = readMore(now, SHOWN_COPY_REFRESH_READS);
      expect(nextLoopStep(readMore(now, SHOWN_COPY_REFRESH_READS - 1), T0 + 60_000, enteredAs, LIMITS)).toMatchObject({
        kind: 'read',
      });
      expect(nextLoopStep(due, T0 + SHOWN_COPY_REFRESH_MS - 1, enteredAs, LIMITS)).toMatchObject({ kind: 'read' });
      expect(nextLoopStep(due, T0 + SHOWN_COPY_REFRESH_MS, enteredAs, LIMITS)).toEqual({
        kind: 'exit',
        reason: 'refresh_due',
      });
    }
    // Nothing moved: however many reads, the copy stands.
    expect(nextLoopStep(readMore(entered, 500), T0 + 60_000, loop, LIMITS)).toMatchObject({ kind: 'read' });
  });

  it("P8: the copy's age counts from the activity's scheduling (copiedAtMs) across attempts, and a refresh due before a long wait goes back at once", () => {
    const entered = { ...waitingUntil(T0 + 1_000), localState: 'accepted' as const };
    const moved = readMore(waitingUntil(T0 + 150_000), SHOWN_COPY_REFRESH_READS);
    // An attempt begun just now, of an activity scheduled long ago: the copy is old.
    const attempt = { startedAtMs: T0 + 90_000, copiedAtMs: T0, entered };
    expect(nextLoopStep(moved, T0 + 90_000, attempt, LIMITS)).toEqual({ kind: 'exit', reason: 'refresh_due' });
    // The same wait with nothing moved is a long wait (a retry of the activity).
    expect(nextLoopStep(moved, T0 + 90_000, { ...attempt, entered: moved }, LIMITS)).toEqual({
      kind: 'exit',
      reason: 'long_wait',
    });
  });

  it('P8: whatever moves at each read and whatever the interval, refreshes number at most one per SHOWN_COPY_REFRESH_READS reads', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1, max: 120_000 }), (reads, intervalMs) => {
        let copy = observingRecord();
        let record = copy;
        let copiedAtMs = T0;
        let refreshes = 0;
        for (let read = 1; read <= reads; read += 1) {
          const nowMs = T0 + read * intervalMs;
          record = { ...readMore(record, 1), remote: { ...record.remote, progress: read / (reads + 1) } };
          const next = {
            ...record,
            schedule: { nextPollAtMs: nowMs + intervalMs, delaySource: 'local_backoff' as const },
          };
          const step = nextLoopStep(next, nowMs, { startedAtMs: copiedAtMs, entered: copy }, LIMITS);
          if (step.kind === 'exit' && step.reason === 'refresh_due') {
            refreshes += 1;
            copy = record;
            copiedAtMs = nowMs;
          }
        }
        expect(refreshes).toBeLessThanOrEqual(Math.floor(reads / SHOWN_COPY_REFRESH_READS));
      }),
    );
  });

  it('B2: a record holding an open reservation is never read again by the loop', () => {
    expect(
      nextLoopStep(observingRecord(), T0 + 5_000, { startedAtMs: T0, entered: observingRecord() }, LIMITS),
    ).toEqual({ kind: 'exit', reason: 'state_changed' });
  });

  it('S3: a wait that ends at the deadline stays in the loop, so the wake-up check records the stop', () => {
    const record = waitingUntil(0);
    const deadline = effectiveDeadlineMs(record);
    const atDeadline = { ...record, schedule: { nextPollAtMs: deadline, delaySource: 'deadline' as const } };
    expect(
      nextLoopStep(atDeadline, deadline - 1_000, { startedAtMs: deadline - 1_000, entered: observingRecord() }, LIMITS),
    ).toEqual({
      kind: 'wait',
      untilMs: deadline,
    });
  });

  it('P4: over any record and time, a loop wait is never longer than maxWaitMs nor past the loop end', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 600_000 }),
        fc.integer({ min: 0, max: 600_000 }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.integer({ min: 0, max: 120_000 }),
        (waitMs, maxWaitMs, loopAgeMs, maxLoopExtra) => {
          const limits = { maxWaitMs, maxLoopMs: 1_000 + maxLoopExtra };
          const now = T0 + 1_000_000;
          const step = nextLoopStep(
            waitingUntil(now + waitMs),
            now,
            { startedAtMs: now - loopAgeMs, entered: observingRecord() },
            limits,
          );
          if (step.kind === 'wait') {
            expect(step.untilMs - now).toBeLessThanOrEqual(maxWaitMs);
            expect(step.untilMs - (now - loopAgeMs)).toBeLessThanOrEqual(limits.maxLoopMs);
          }
        },
      ),
    );
  });

  it("P4: the status activity's heartbeat timeout is the loop's longest wait (at most 30 s) + 30 s, so a lost worker's next read is at most 30 s late", () => {
    const withMaxDelay = (maxDelayMs: number) => {
      const record = observingRecord();
      return { ...record, policy: { ...record.policy, maxDelayMs } } satisfies OperationRecord;
    };
    expect(statusHeartbeatTimeoutMs(withMaxDelay(1_000), DEFAULT_POLL_LOOP_LIMITS)).toBe(31_000);
    expect(statusHeartbeatTimeoutMs(withMaxDelay(20_000), DEFAULT_POLL_LOOP_LIMITS)).toBe(50_000);
    expect(statusHeartbeatTimeoutMs(withMaxDelay(120_000), DEFAULT_POLL_LOOP_LIMITS)).toBe(60_000);
    expect(statusHeartbeatTimeoutMs(withMaxDelay(120_000), { ...LIMITS, maxWaitMs: 100 })).toBe(30_100);
    expect(statusHeartbeatTimeoutMs(withMaxDelay(120_000), { ...LIMITS, maxWaitMs: 10 * 60_000 })).toBe(60_000);
    expect(statusHeartbeatTimeoutMs(withMaxDelay(120_000), { ...LIMITS, maxWaitMs: 0 })).toBe(30_000);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3_600_000 }),
        fc.integer({ min: 0, max: 600_000 }),
        (maxDelayMs, maxWaitMs) => {
          const limits = { ...LIMITS, maxWaitMs };
          const record = withMaxDelay(maxDelayMs);
          const timeoutMs = statusHeartbeatTimeoutMs(record, limits);
          // A policy's waits up to 30 s are covered whole with 30 s to spare; never past a minute (the loop beats
          // within each wait anyway, so a longer wait needs no longer timeout).
          expect(timeoutMs - Math.min(maxDelayMs, maxWaitMs, 30_000)).toBe(30_000);
          expect(timeoutMs).toBeLessThanOrEqual(60_000);
        },
      ),
    );
  });

  it('P4: the workflow hands a short wait of a polling operation to the loop; a long one, or any other state, stays a timer', () => {
    const now = T0 + 10_000;
    expect(loopTakesWait(waitingUntil(now + 5_000), now, LIMITS)).toBe(true);
    expect(loopTakesWait(waitingUntil(now + 60_000), now, LIMITS)).toBe(false);
    expect(loopTakesWait(waitingUntil(now + 5_000), now, { ...LIMITS, maxWaitMs: 0 })).toBe(false);
    expect(loopTakesWait({ ...waitingUntil(now + 5_000), localState: 'reconciliation' }, now, LIMITS)).toBe(false);
    expect(loopTakesWait(waitingUntil(now - 1), now, LIMITS)).toBe(false);
  });

  it('the limits are validated at the boundary (a loop longer than an activity may run is refused)', () => {
    expect(pollLoopLimitsSchema.safeParse(DEFAULT_POLL_LOOP_LIMITS).success).toBe(true);
    expect(pollLoopLimitsSchema.safeParse({ maxWaitMs: 30_000, maxLoopMs: 10 * 60_000 }).success).toBe(false);
    expect(pollLoopLimitsSchema.safeParse({ maxWaitMs: -1, maxLoopMs: 60_000 }).success).toBe(false);
    expect(pollLoopLimitsSchema.safeParse({ maxWaitMs: 1_000, maxLoopMs: 60_000, extra: 1 }).success).toBe(false);
  });
});

describe('long waits as retries of the status activity (P4, P8)', () => {
  const now = T0 + 10_000;

  it('P4: the workflow hands a long wait of a polling operation to retries; a short one, a reservation, or any other state does not', () => {
    const retries = { ...LIMITS, retryWaits: true };
    expect(retryTakesWait(waitingUntil(now + 60_000), now, retries)).toBe(true);
    expect(retryTakesWait(waitingUntil(now + 5_000), now, retries)).toBe(false);
    expect(retryTakesWait(waitingUntil(now + 60_000), now, { ...retries, maxWaitMs: 0 })).toBe(false);
    expect(retryTakesWait({ ...waitingUntil(now + 60_000), localState: 'reconciliation' }, now, retries)).toBe(false);
    expect(retryTakesWait({ ...waitingUntil(now + 60_000), localState: 'cancelling' }, now, retries)).toBe(false);
    const reserved = { ...observingRecord(), schedule: { reservedAtMs: now } } satisfies OperationRecord;
    expect(retryTakesWait(reserved, now, retries)).toBe(false);
    // Facts recorded before retry waits (an operation started on an earlier version) keep its durable timers.
    expect(retryTakesWait(waitingUntil(now + 60_000), now, LIMITS)).toBe(false);
    expect(DEFAULT_POLL_LOOP_LIMITS.retryWaits).toBe(true);
  });

  it('P4: a long wait, or an attempt whose time is spent, goes on as a retry after exactly the planned wait', () => {
    const record = waitingUntil(now + 45_000);
    expect(retryDelayAfter('long_wait', record, now)).toBe(45_000);
    expect(retryDelayAfter('loop_time_spent', record, now)).toBe(45_000);
    // A read already due is the next attempt at once (1 ms: a zero delay would be Temporal's backoff).
    expect(retryDelayAfter('loop_time_spent', waitingUntil(now), now)).toBe(1);
  });

  it.each(['state_changed', 'refresh_due', 'cancelled', 'superseded'] as const)(
    'P5: a loop ended by %s goes back to the workflow, never on as a retry',
    (exit) => {
      const record = waitingUntil(now + 45_000);
      expect(retryDelayAfter(exit, record, now)).toBeUndefined();
    },
  );

  it("P8: a waiting attempt's failure names the job's last answer, for the Web UI's pending activity", () => {
    const waiting = waitingUntil(now + 45_000);
    const record = {
      ...waiting,
      remote: { ...waiting.remote, state: 'Running', progress: 0.42 },
      used: { ...waiting.used, statusRequests: 3 },
    };
    expect(pendingReadSummary(record, now + 45_000, now)).toBe(
      'observing (provider: "Running"), 42% done after 3 status reads; the next status read is due in 45000 ms',
    );
    expect(
      pendingReadSummary(
        { ...waiting, localState: 'accepted', used: { ...waiting.used, statusRequests: 1 } },
        now + 5,
        now,
      ),
    ).toMatch(/^accepted( \(provider: "[^"]*"\))? after 1 status read; the next status read is due in 5 ms$/);
  });

  it('P4: the create reads on for its first CREATE_READS_ON_MS only, never as retries; a read due past them goes back', () => {
    const given = readOnAfterCreateLimits({ ...LIMITS, retryWaits: true, createReadsOn: true });
    expect(given).toEqual({ loop: { maxWaitMs: LIMITS.maxWaitMs, maxLoopMs: CREATE_READS_ON_MS } });
    expect(pollLoopLimitsSchema.safeParse(given.loop).success).toBe(true);
    expect(readOnAfterCreateLimits({ maxWaitMs: 100, maxLoopMs: 1_000 }).loop).toEqual({
      maxWaitMs: 100,
      maxLoopMs: 1_000,
    });
    const created = { startedAtMs: now, entered: { ...observingRecord(), localState: 'create_pending' as const } };
    expect(nextLoopStep(waitingUntil(now + CREATE_READS_ON_MS), now, created, given.loop)).toEqual({
      kind: 'wait',
      untilMs: now + CREATE_READS_ON_MS,
    });
    expect(nextLoopStep(waitingUntil(now + CREATE_READS_ON_MS + 1), now, created, given.loop)).toEqual({
      kind: 'exit',
      reason: 'loop_time_spent',
    });
    expect(DEFAULT_POLL_LOOP_LIMITS.createReadsOn).toBe(true);
  });

  it('P4: a worker of an earlier version is given the limits its strict schema reads, and a long wait it hands back unread waits on a timer', () => {
    const retries = { ...LIMITS, retryWaits: true };
    expect(statusActivityLimits(retries)).toEqual({ loop: LIMITS, retryWaits: true });
    expect(pollLoopLimitsSchema.safeParse(statusActivityLimits(retries).loop).success).toBe(true);
    expect(statusActivityLimits(LIMITS)).toEqual({ loop: LIMITS });
    const waiting = waitingUntil(now + 60_000);
    // Handed back with nothing recorded and the same long wait ahead: only an earlier version does that.
    expect(handedBackUnread(waiting, waiting, now, retries)).toBe(now + 60_000);
    const recorded = { ...waiting, journal: { ...waiting.journal, nextSequence: waiting.journal.nextSequence + 1 } };
    expect(handedBackUnread(waiting, recorded, now, retries)).toBeUndefined();
    expect(handedBackUnread(waiting, waitingUntil(now + 5_000), now, retries)).toBeUndefined();
    expect(handedBackUnread(waiting, waiting, now, LIMITS)).toBeUndefined();
  });
});

describe('after a loop lost its worker (B2, F2)', () => {
  it('B2: the store is adopted when it recorded more, or a read the loop reserved there; the workflow keeps its own reservation', () => {
    const held = waitingUntil(T0 + 1_000);
    const reservedInStore = { ...held, used: { ...held.used, statusRequests: 2 }, schedule: { reservedAtMs: T0 } };
    expect(storeIsAhead(held, reservedInStore)).toBe(true);
    const recordedMore = { ...held, journal: { ...held.journal, nextSequence: held.journal.nextSequence + 2 } };
    expect(storeIsAhead(held, recordedMore)).toBe(true);
    expect(storeIsAhead(observingRecord(), held)).toBe(false);
    expect(storeIsAhead(recordedMore, held)).toBe(false);
  });

  it('P4, B2: a create that recorded nothing is not adopted from the store, so its failure is recorded as a call failure', () => {
    const beforeCreate = newRecord();
    expect(storeIsAhead(beforeCreate, structuredClone(beforeCreate))).toBe(false);
  });
});

describe('a webhook inside the loop (W1)', () => {
  const now = T0 + 20_000;

  it('W1: moves the next read to now, with the webhook as its reason', () => {
    const record = waitingUntil(now + 20_000);
    expect(webhookMovesReadToNow(record, now)).toBe(true);
    expect(readNowForWebhook(record, now).schedule).toEqual({ nextPollAtMs: now, delaySource: 'webhook_hint' });
  });

  it("W1, H1: never overrides a provider's Retry-After, never after the deadline, never with a read open", () => {
    expect(webhookMovesReadToNow(waitingUntil(now + 20_000, 'provider_retry_after'), now)).toBe(false);
    const record = waitingUntil(now + 20_000);
    expect(webhookMovesReadToNow(record, effectiveDeadlineMs(record))).toBe(false);
    expect(webhookMovesReadToNow(observingRecord(), now)).toBe(false);
  });

  it('W1: a hint already confirmed by a status read sent after it arrived is noted and wakes nothing', () => {
    const ctx = {
      nowMs: now,
      random: 0.5,
      actor: 'worker:test',
      capabilities: NO_CAPABILITIES,
      reconciliation: 'none' as const,
    };
    // The loop read at `now` (woken in the receiver's process) and planned its next read 20 s later.
    const read = afterStatus(
      observingRecord(),
      obs({ receivedAtMs: now, remoteState: 'running', category: 'pending' }),
      ctx,
    );
    const hint = { eventId: 'evt-1', remoteJobId: 'job_7ad2', receivedAtMs: now + 50 };
    const heardBefore = applyWebhookHint(
      read.record,
      { ...hint, receivedAt: new Date(now - 5).toISOString() },
      {
        ...ctx,
        nowMs: now + 50,
      },
    );
    expect(heardBefore.record.schedule).toEqual(read.record.schedule);
    expect(heardBefore.record.journal.observations.at(-1)?.body).toMatchObject({
      action: 'webhook',
      decision: 'noted',
      note: expect.stringContaining('already confirmed by a status read'),
    });
    const heardAfter = applyWebhookHint(
      read.record,
      { ...hint, receivedAt: new Date(now + 5).toISOString() },
      {
        ...ctx,
        nowMs: now + 50,
      },
    );
    expect(heardAfter.record.schedule).toEqual({ nextPollAtMs: now + 50, delaySource: 'webhook_hint' });
    const noReceiverTime = applyWebhookHint(read.record, hint, { ...ctx, nowMs: now + 50 });
    expect(noReceiverTime.record.schedule.delaySource).toBe('webhook_hint');
  });
});

describe("the pending status activity's last answer over the workflow's copy (P8)", () => {
  const copy = { ...observingRecord(), localState: 'accepted' as const, schedule: { nextPollAtMs: T0 + 1_000 } };
  const last = copy.journal.nextSequence - 1;
  const answer = (sequence: number, progress: number | null = 0.5) => ({
    ...pendingReadDetails({ ...copy, localState: 'observing' }, T0 + 60_000),
    remoteState: 'Running',
    progress,
    observedAtMs: T0 + 5_000,
    delaySource: 'provider_retry_after' as const,
    sequence,
    statusRequestsUsed: copy.used.statusRequests + (sequence - last),
  });

  it('P8: a newer answer is shown over the copy: state, the provider word, progress, requests used, next read', () => {
    const shown = withPendingRead(copy, [answer(last + 3)]);
    expect(shown).toMatchObject({
      localState: 'observing',
      remote: { state: 'Running', progress: 0.5 },
      used: { statusRequests: copy.used.statusRequests + 3 },
      schedule: { nextPollAtMs: T0 + 60_000, delaySource: 'provider_retry_after' },
    });
    // The provider's word with when it was received, and the next read with its reason: never an old one's.
    expect(shown.remote.observedAtMs).toBe(T0 + 5_000);
    expect(shown.journal).toBe(copy.journal);
    // The newest of the heartbeat's and the failure's answers wins, whichever order they come in.
    expect(withPendingRead(copy, [answer(last + 2, 0.2), answer(last + 5, 0.7)]).remote.progress).toBe(0.7);
    expect(withPendingRead(copy, [answer(last + 5, 0.7), answer(last + 2, 0.2)]).remote.progress).toBe(0.7);
  });

  it('P8: an answer no newer than the copy, a malformed one, or any answer once the copy left polling is ignored', () => {
    expect(withPendingRead(copy, [answer(last)])).toBe(copy);
    expect(withPendingRead(copy, [undefined, null, 'x', { ...answer(last + 3), localState: 'succeeded' }])).toBe(copy);
    expect(withPendingRead(copy, [{ ...answer(last + 3), progress: 2 }])).toBe(copy);
    const ended = { ...copy, localState: 'succeeded' as const };
    expect(withPendingRead(ended, [answer(last + 9)])).toBe(ended);
    // An answer without progress keeps the copy's.
    const withProgress = { ...copy, remote: { ...copy.remote, progress: 0.1 } };
    expect(withPendingRead(withProgress, [answer(last + 1, null)]).remote.progress).toBe(0.1);
  });
});
