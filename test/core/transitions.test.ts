import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { localStateSchema, type LocalState } from '../../src/core/journal';
import { type Observation } from '../../src/core/observation';
import { observationOf } from '../../src/core/operation-event';
import { type OperationRecord, TRANSITION_TAIL } from '../../src/core/operation';
import { raiseEscalation } from '../../src/core/raise-escalation';
import { transition, TRANSITIONS, type EventOf, type EventType, type OperationEvent } from '../../src/core/transitions';
import { T0, newRecord, obs } from './helpers';

const CAPS = { cancel: true, repeatableCollect: true };
const A = 'workflow';

const O = {
  created: obs({
    action: 'create',
    httpStatus: 202,
    remoteJobId: 'job_7ad2',
    statusUrl: 'https://api.example/v1/jobs/job_7ad2',
  }),
  createdNoId: obs({ action: 'create', httpStatus: 202 }),
  createdOther: obs({ action: 'create', httpStatus: 202, remoteJobId: 'job_other' }),
  createTimeout: obs({
    action: 'create',
    transport: 'ambiguous',
    httpStatus: undefined,
    errorCategory: 'timeout_after_send',
  }),
  createNotSent: obs({
    action: 'create',
    transport: 'not_sent',
    httpStatus: undefined,
    errorCategory: 'connect_refused',
  }),
  syncSuccess: obs({
    action: 'create',
    httpStatus: 200,
    category: 'success',
    remoteState: 'done',
    resultReference: { inline: { total: 3 } },
  }),
  reconcileMatch: obs({ action: 'reconcile', httpStatus: 200, remoteJobId: 'job_7ad2' }),
  reconcileNone: obs({ action: 'reconcile', httpStatus: 404 }),
  running: obs({ remoteState: 'running', category: 'pending', progress: 1 }),
  success: obs({
    remoteState: 'done',
    category: 'success',
    resultReference: { url: 'https://api.example/v1/results/1' },
  }),
  successNoRef: obs({ remoteState: 'done', category: 'success' }),
  failure: obs({ remoteState: 'error', category: 'failure' }),
  cancelledRemote: obs({ remoteState: 'cancelled', category: 'cancelled' }),
  cancelAnswer: obs({ action: 'cancel', httpStatus: 202 }),
  collectFailed: obs({ action: 'collect', httpStatus: 500 }),
} satisfies Record<string, Observation>;

const INTENT = {
  requestedBy: 'alice@example.com',
  reason: 'report no longer needed',
  expectedEffect: 'provider stops the export',
};

/** An event without its actor; each type keeps exactly its own evidence. */
type Evidence = { [Type in EventType]: Omit<EventOf<Type>, 'actor'> }[EventType];

function apply(record: OperationRecord, event: Evidence, nowMs = T0 + 5_000): OperationRecord {
  const result = transition(record, { actor: A, ...event }, nowMs);
  if (result.kind !== 'applied') throw new Error(`${record.localState} --${event.type}--> refused: ${result.message}`);
  return result.record;
}

function escalate(
  record: OperationRecord,
  reason: Parameters<typeof raiseEscalation>[1] = 'unknown_state',
  nowMs = T0 + 5_000,
): OperationRecord {
  return apply(record, { type: 'escalate', escalation: raiseEscalation(record, reason, 'test', nowMs, CAPS) }, nowMs);
}

const accepted = () => apply(newRecord(), { type: 'create_accepted', observation: O.created });
const observing = () => apply(accepted(), { type: 'status_observed', observation: O.running });
const collecting = () => apply(observing(), { type: 'remote_succeeded', observation: O.success });
const cancelRequested = () => apply(observing(), { type: 'cancel_requested', cancelIntent: INTENT });
const cancelling = () => apply(cancelRequested(), { type: 'cancel_sent', observation: O.cancelAnswer });
const createUnknown = () => apply(newRecord(), { type: 'create_ambiguous', observation: O.createTimeout });
const reconciling = () =>
  apply(createUnknown(), { type: 'reconciliation_started', reconcileMethod: 'same_token_resend' });
const LATE = T0 + 3_600_000;

describe('M: every local state of the diagram is reachable with evidence', () => {
  const paths: [string, () => OperationRecord][] = [
    ['create_pending', () => newRecord()],
    ['accepted', accepted],
    ['observing', observing],
    ['result_collecting', collecting],
    [
      'succeeded',
      () => apply(collecting(), { type: 'result_validated', result: { validation: 'valid', recordCount: 500 } }),
    ],
    ['create_unknown', createUnknown],
    ['reconciliation', reconciling],
    ['accepted', () => apply(reconciling(), { type: 'reconciliation_matched', observation: O.reconcileMatch })],
    [
      'failed',
      () => apply(reconciling(), { type: 'reconciliation_no_job', observation: O.reconcileNone }, T0 + 120_000),
    ],
    ['escalated', () => escalate(reconciling(), 'create_unknown')],
    ['cancel_requested', cancelRequested],
    ['cancelling', cancelling],
    ['cancelled', () => apply(cancelling(), { type: 'remote_cancelled', observation: O.cancelledRemote })],
    [
      'succeeded',
      () => apply(cancelling(), { type: 'result_validated', observation: O.success, result: { validation: 'valid' } }),
    ],
    ['failed', () => apply(cancelling(), { type: 'remote_failed', observation: O.failure })],
    ['cancellation_unconfirmed', () => apply(cancelling(), { type: 'cancel_deadline_reached' }, T0 + 5_000 + 600_000)],
    ['failed', () => apply(accepted(), { type: 'remote_failed', observation: O.failure })],
    ['failed', () => apply(observing(), { type: 'remote_failed', observation: O.failure })],
    ['result_timed_out', () => apply(observing(), { type: 'deadline_reached' }, LATE)],
    ['result_unavailable', () => apply(collecting(), { type: 'result_unavailable', observation: O.collectFailed })],
    [
      'result_validation_failed',
      () =>
        apply(collecting(), {
          type: 'result_invalid',
          result: { validation: 'invalid', problems: ['row 3: bad total'] },
        }),
    ],
    ['result_collecting', () => apply(newRecord(), { type: 'create_succeeded_sync', observation: O.syncSuccess })],
    [
      'observing',
      () =>
        apply(escalate(observing()), {
          type: 'decide',
          decision: {
            option: 'extend',
            approvedBy: 'bob@example.com',
            reason: 'provider incident',
            extendMs: 900_000,
            extraStatusRequests: 4,
          },
        }),
    ],
    [
      'cancel_requested',
      () =>
        apply(escalate(observing()), {
          type: 'decide',
          decision: { option: 'cancel_at_provider', approvedBy: 'bob@example.com', reason: 'too late' },
        }),
    ],
    [
      'closed',
      () =>
        apply(escalate(observing()), {
          type: 'decide',
          decision: { option: 'close', approvedBy: 'bob@example.com', reason: 'abandon' },
        }),
    ],
  ];
  it.each(paths)('M1: reaches %s', (state, build) => {
    const record = build();
    expect(record.localState).toBe(state);
    const last = record.journal.transitions.at(-1)!;
    expect(last.body.to).toBe(state);
    expect(last.sequence).toBe(record.journal.nextSequence - 1);
  });

  it('M: the paths cover every local state', () => {
    expect(new Set(paths.map(([s]) => s))).toEqual(new Set(localStateSchema.options));
  });

  it.each(
    localStateSchema.options.filter((s) => !['succeeded', 'failed', 'cancelled', 'closed', 'escalated'].includes(s)),
  )('M: %s can escalate', (state) => {
    const record = { ...newRecord(), localState: state as LocalState };
    expect(escalate(record).localState).toBe('escalated');
  });
});

describe('M1: a transition without its evidence is refused, naming what is missing', () => {
  it.each<[string, () => OperationRecord, Evidence, string[], number?]>([
    [
      'not succeeded because progress said 100',
      collecting,
      { type: 'result_validated', observation: O.running },
      ['validated_result'],
    ],
    [
      'not succeeded on a success without a result reference and no validated result',
      () => apply(newRecord(), { type: 'create_accepted', observation: O.created }),
      { type: 'remote_succeeded', observation: O.successNoRef },
      [],
    ],
    [
      'not result_collecting on success without its result reference (P7)',
      observing,
      { type: 'remote_succeeded', observation: O.successNoRef },
      ['success_observation'],
    ],
    [
      'not cancelled because the cancel request was answered',
      cancelling,
      { type: 'remote_cancelled', observation: O.cancelAnswer },
      ['cancelled_observation'],
    ],
    [
      'not accepted on a 202 that names no job (C2)',
      () => newRecord(),
      { type: 'create_accepted', observation: O.createdNoId },
      ['create_answer_with_job_id'],
    ],
    [
      'not accepted because the connection timed out after sending (C2)',
      () => newRecord(),
      { type: 'create_accepted', observation: O.createTimeout },
      ['create_answer_with_job_id'],
    ],
    [
      'not create_unknown when the request never left (U1)',
      () => newRecord(),
      { type: 'create_ambiguous', observation: O.createNotSent },
      ['ambiguous_create'],
    ],
    [
      'not failed by an empty lookup before the create deadline (U2)',
      reconciling,
      { type: 'reconciliation_no_job', observation: O.reconcileNone },
      ['reconciliation_no_job'],
    ],
    [
      'not result_timed_out before the deadline (S3)',
      observing,
      { type: 'deadline_reached' },
      ['result_deadline_passed'],
    ],
    [
      'not cancellation_unconfirmed before the cancel deadline (X3)',
      cancelling,
      { type: 'cancel_deadline_reached' },
      ['cancel_deadline_passed'],
    ],
    [
      'not cancel_requested without who, why and expected effect (X1)',
      observing,
      { type: 'cancel_requested', cancelIntent: { ...INTENT, reason: ' ' } },
      ['cancel_intent'],
    ],
    [
      'not cancelling on a cancel call that got no answer (X1)',
      cancelRequested,
      { type: 'cancel_sent', observation: obs({ action: 'cancel', httpStatus: 500 }) },
      ['cancel_answer'],
    ],
    [
      'not escalated with an escalation that offers no option (E1)',
      observing,
      {
        type: 'escalate',
        escalation: { ...raiseEscalation(observing(), 'unknown_state', 'x', T0, CAPS), options: [] },
      },
      ['escalation'],
    ],
    [
      'not result_unavailable on a successful collect',
      collecting,
      { type: 'result_unavailable', observation: obs({ action: 'collect', httpStatus: 200 }) },
      ['collect_failure'],
    ],
    [
      'not result_validation_failed without an invalid result',
      collecting,
      { type: 'result_invalid', result: { validation: 'valid' } },
      ['invalid_result'],
    ],
  ])('M1: %s', (_title, build, event, missing) => {
    const result = transition(build(), { actor: A, ...event }, T0 + 5_000);
    expect(result.kind).toBe('refused');
    if (result.kind === 'refused' && missing.length > 0) {
      expect(result.code).toBe('ASYNCJOB_ERR_MISSING_EVIDENCE');
      expect(result.missingEvidence).toEqual(missing);
    }
  });

  it('M1, U2, E1, X1: an event without its evidence does not compile (checked by tsc)', () => {
    expectTypeOf<{ type: 'reconciliation_started'; actor: string }>().not.toExtend<OperationEvent>();
    expectTypeOf<{ type: 'escalate'; actor: string }>().not.toExtend<OperationEvent>();
    expectTypeOf<{ type: 'cancel_requested'; actor: string }>().not.toExtend<OperationEvent>();
    expectTypeOf<{ type: 'decide'; actor: string }>().not.toExtend<OperationEvent>();
    expectTypeOf<{ type: 'result_invalid'; actor: string }>().not.toExtend<OperationEvent>();
    expectTypeOf<{ type: 'remote_succeeded'; actor: string }>().not.toExtend<OperationEvent>();
    expectTypeOf<{ type: 'cancel_sent'; actor: string }>().not.toExtend<OperationEvent>();
    // Evidence that is only a time, or a result a person accepted earlier, needs no field.
    expectTypeOf<{ type: 'deadline_reached'; actor: string }>().toExtend<OperationEvent>();
    expectTypeOf<{ type: 'result_validated'; actor: string }>().toExtend<OperationEvent>();
    // Every member of the union has an arrow in the table, and every arrow's event is a member.
    const everyType: Record<EventType, true> = {
      create_accepted: true,
      create_succeeded_sync: true,
      create_ambiguous: true,
      reconciliation_started: true,
      reconciliation_matched: true,
      reconciliation_no_job: true,
      status_observed: true,
      remote_succeeded: true,
      result_validated: true,
      result_unavailable: true,
      result_invalid: true,
      remote_failed: true,
      deadline_reached: true,
      cancel_requested: true,
      cancel_sent: true,
      remote_cancelled: true,
      cancel_deadline_reached: true,
      variables_refused: true,
      escalate: true,
      decide: true,
    };
    expect(new Set(TRANSITIONS.map((rule) => rule.event))).toEqual(new Set(Object.keys(everyType)));
  });

  it('M1: an arrow that is not in the diagram is refused as not allowed', () => {
    expect(transition(observing(), { actor: A, type: 'create_accepted', observation: O.created }, T0)).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_TRANSITION_NOT_ALLOWED',
    });
    expect(
      transition(observing(), { actor: A, type: 'remote_cancelled', observation: O.cancelledRemote }, T0),
    ).toMatchObject({ kind: 'refused', code: 'ASYNCJOB_ERR_TRANSITION_NOT_ALLOWED' });
  });

  it('M1: nothing leaves a final state', () => {
    const closed = apply(escalate(observing()), {
      type: 'decide',
      decision: { option: 'close', approvedBy: 'bob', reason: 'done' },
    });
    expect(
      transition(
        closed,
        { actor: A, type: 'escalate', escalation: raiseEscalation(closed, 'unknown_state', 'x', T0, CAPS) },
        T0,
      ),
    ).toMatchObject({ kind: 'refused', code: 'ASYNCJOB_ERR_OPERATION_FINAL' });
  });

  it('A2: a decision for an option not offered is refused', () => {
    const escalated = escalate(observing(), 'authorization_denied');
    const result = transition(
      escalated,
      {
        actor: A,
        type: 'decide',
        decision: { option: 'extend', approvedBy: 'bob', reason: 'again', extendMs: 1000, extraStatusRequests: 1 },
      },
      T0 + 6_000,
    );
    expect(result).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_MISSING_EVIDENCE',
      missingEvidence: ['decision'],
    });
  });

  it('X3: a cancel already sent is never requested again', () => {
    const record = { ...escalate(cancelling(), 'cancellation_unconfirmed') };
    expect(record.escalation?.options.map((o) => o.option)).not.toContain('cancel_at_provider');
    const back = apply(record, {
      type: 'decide',
      decision: {
        option: 'extend',
        approvedBy: 'bob',
        reason: 'wait for confirmation',
        extendMs: 60_000,
        extraStatusRequests: 2,
      },
    });
    expect(back.localState).toBe('cancelling');
  });

  it('U3: a second, different job ID is refused as a conflict and both IDs are kept', () => {
    const record = { ...reconciling(), remote: { ...reconciling().remote, jobIds: ['job_first'] } };
    const result = transition(
      record,
      { actor: A, type: 'reconciliation_matched', observation: O.reconcileMatch },
      T0 + 5_000,
    );
    expect(result).toMatchObject({ kind: 'refused', code: 'ASYNCJOB_ERR_JOB_ID_CONFLICT' });
    const esc = raiseEscalation(
      { ...record, remote: { ...record.remote, jobIds: ['job_first', 'job_7ad2'] } },
      'job_id_conflict',
      'same token, two jobs',
      T0,
      CAPS,
    );
    const adopted = apply(apply(record, { type: 'escalate', escalation: esc }), {
      type: 'decide',
      decision: { option: 'adopt_job', approvedBy: 'bob', reason: 'first one is real', jobId: 'job_first' },
    });
    expect(adopted).toMatchObject({ localState: 'observing', jobId: 'job_first' });
  });
});

describe('M2, M3: local facts apart from remote facts; every transition appended', () => {
  it('M2: cancel_requested records our intent and leaves the remote facts untouched', () => {
    const before = observing();
    const after = cancelRequested();
    expect(after.cancel).toMatchObject({ ...INTENT, requestedAtMs: T0 + 5_000 });
    expect(after.remote).toEqual(before.remote);
    expect(after.deadlines.cancelDeadlineMs).toBe(T0 + 5_000 + after.policy.cancelDeadlineMs);
  });

  it('M3: each transition gets the next sequence, with from, to, cause, actor and job ID; the tail is bounded', () => {
    let record = escalate(observing());
    for (let i = 0; i < 30; i++) {
      record = apply(record, {
        type: 'decide',
        decision: { option: 'extend', approvedBy: 'bob', reason: `round ${i}`, extendMs: 1000, extraStatusRequests: 1 },
      });
      record = escalate(record);
    }
    const tail = record.journal.transitions;
    expect(tail).toHaveLength(TRANSITION_TAIL);
    tail.forEach((t, i) => i > 0 && expect(t.sequence).toBe(tail[i - 1]!.sequence + 1));
    expect(tail.at(-1)).toMatchObject({
      actor: A,
      body: { from: 'observing', to: 'escalated', cause: 'escalate', remoteJobId: 'job_7ad2', reason: 'unknown_state' },
    });
  });

  it('A2: an extension adds bounded time and checks and never resets counters', () => {
    const start = observing();
    const used = { ...start, used: { ...start.used, statusRequests: 12, transportFailures: 2 } };
    const escalated = escalate(used, 'request_budget_exhausted', LATE);
    const extended = apply(
      escalated,
      {
        type: 'decide',
        decision: {
          option: 'extend',
          approvedBy: 'bob',
          reason: 'incident',
          extendMs: 900_000,
          extraStatusRequests: 4,
        },
      },
      LATE + 10,
    );
    expect(extended.used).toEqual(used.used);
    expect(extended.budgets.maxStatusRequests).toBe(used.budgets.maxStatusRequests + 4);
    expect(extended.deadlines.resultDeadlineMs).toBe(LATE + 10 + 900_000);
    expect(extended.schedule).toEqual({ nextPollAtMs: LATE + 10, delaySource: 'manual_extension' });
    expect(extended.authorisation.approvals.at(-1)).toMatchObject({
      approvedBy: 'bob',
      option: 'extend',
      bounds: { extendMs: 900_000, extraStatusRequests: 4 },
    });
  });
});

describe('M1 properties over random event sequences', () => {
  const TYPES = [...new Set(TRANSITIONS.map((t) => t.event))] as EventType[];
  const reached = new Set<LocalState>();
  const OBS = Object.values(O);
  const stepArb = fc.record({
    type: fc.constantFrom(...TYPES),
    applicable: fc.boolean(),
    typeIndex: fc.nat(50),
    observation: fc.option(fc.constantFrom(...OBS), { nil: undefined }),
    result: fc.option(
      fc.constantFrom(
        { validation: 'valid' as const },
        { validation: 'invalid' as const },
        { validation: 'not_checked' as const },
      ),
      { nil: undefined },
    ),
    withIntent: fc.boolean(),
    reconcile: fc.boolean(),
    escalationReason: fc.option(
      fc.constantFrom(
        'unknown_state' as const,
        'result_validation_failed' as const,
        'create_unknown' as const,
        'deadline_exceeded' as const,
      ),
      { nil: undefined },
    ),
    optionIndex: fc.nat(100),
    advanceMs: fc.integer({ min: 0, max: 900_000 }),
  });
  type Step = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

  /** A well-typed event of the step's type, whose evidence may or may not say what its arrow needs. */
  function eventFor(record: OperationRecord, step: Step, nowMs: number): OperationEvent {
    const offered = record.escalation?.options ?? [];
    const choice = offered.length > 0 ? offered[step.optionIndex % offered.length] : undefined;
    const applicable = [
      ...new Set(TRANSITIONS.filter((rule) => rule.from.includes(record.localState)).map((rule) => rule.event)),
    ];
    const type = step.applicable && applicable.length > 0 ? applicable[step.typeIndex % applicable.length]! : step.type;
    const action = type.startsWith('create_')
      ? 'create'
      : type.startsWith('reconciliation_')
        ? 'reconcile'
        : type === 'cancel_sent'
          ? 'cancel'
          : type === 'result_unavailable'
            ? 'collect'
            : 'status';
    const relevant = OBS.filter((o) => o.action === action);
    const observation =
      (step.applicable && relevant.length > 0 ? relevant[step.optionIndex % relevant.length] : step.observation) ??
      OBS[step.optionIndex % OBS.length]!;
    const frame = { actor: A };
    switch (type) {
      case 'reconciliation_started':
        return { ...frame, type, reconcileMethod: 'client_reference_lookup' };
      case 'result_validated':
        return {
          ...frame,
          type,
          ...(step.observation ? { observation: step.observation } : {}),
          ...(step.result ? { result: step.result } : {}),
        };
      case 'result_invalid':
        return { ...frame, type, result: step.result ?? { validation: 'not_checked' } };
      case 'deadline_reached':
      case 'cancel_deadline_reached':
        return { ...frame, type };
      case 'cancel_requested':
        return { ...frame, type, cancelIntent: step.withIntent ? INTENT : { ...INTENT, reason: ' ' } };
      case 'variables_refused':
        return { ...frame, type, issues: step.withIntent ? [{ path: 'variables.x', message: 'not declared' }] : [] };
      case 'escalate': {
        const escalation = raiseEscalation(record, step.escalationReason ?? 'unknown_state', 'random', nowMs, CAPS);
        return { ...frame, type, escalation };
      }
      case 'decide': {
        const decision = {
          option: choice?.option ?? ('close' as const),
          approvedBy: 'bob',
          reason: 'random',
          ...(choice?.option === 'extend'
            ? { extendMs: choice.extendMs!, extraStatusRequests: choice.extraStatusRequests! }
            : {}),
          ...(choice?.option === 'adopt_job' ? { jobId: choice.jobIds![0]! } : {}),
        };
        return { ...frame, type, decision };
      }
      default:
        return { ...frame, type, observation };
    }
  }

  const isSuccess = (answer: Observation | undefined) =>
    answer !== undefined &&
    answer.transport === 'response' &&
    answer.httpStatus! < 300 &&
    answer.category === 'success' &&
    answer.resultReference !== undefined;

  it('M1, S1: no sequence reaches succeeded without a success observation with result fields and a valid (or human-accepted) result; no transition is accepted without its evidence', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 40 }), (steps) => {
        let record = newRecord();
        let now = T0;
        let successSeen = false;
        for (const step of steps) {
          now += step.advanceMs;
          const event = eventFor(record, step, now);
          const result = transition(record, event, now);
          if (result.kind === 'refused') {
            expect(result.code).toMatch(/^ASYNCJOB_ERR_/);
            expect(result.message.length).toBeGreaterThan(0);
            continue;
          }
          const to = result.record.localState;
          const answer = observationOf(event);
          if (isSuccess(answer)) successSeen = true;
          // An oracle per target, written apart from the table.
          switch (to) {
            case 'succeeded':
              expect(successSeen || isSuccess(answer)).toBe(true);
              expect(event.type).toBe('result_validated');
              if (event.type === 'result_validated')
                expect(
                  event.result?.validation === 'valid' ||
                    (event.result === undefined && record.result?.acceptedBy !== undefined),
                ).toBe(true);
              break;
            case 'accepted':
              // C2, V1: the answer names the job by its ID or by its poll URL.
              expect(answer?.remoteJobId ?? answer?.statusUrl).toBeDefined();
              expect(answer?.httpStatus).toBeLessThan(300);
              break;
            case 'cancelled':
              expect(answer).toMatchObject({ action: 'status', category: 'cancelled', transport: 'response' });
              break;
            case 'failed':
              if (event.type === 'reconciliation_no_job')
                expect(now).toBeGreaterThanOrEqual(record.deadlines.createDeadlineMs);
              else if (event.type === 'variables_refused')
                // C5: refused before any create was reserved, naming at least one variable.
                expect([record.localState, record.used.createAttempts, event.issues.length > 0]).toEqual([
                  'create_pending',
                  0,
                  true,
                ]);
              else if (answer?.category === 'cancelled')
                expect(record.cancel).toBeNull(); // provider_cancelled: no cancel of ours
              else expect(['failure', 'expired']).toContain(answer?.category);
              break;
            case 'observing':
              expect(record.localState).not.toBe('failed');
              if (record.localState === 'escalated') expect(event.type).toBe('decide');
              break;
            case 'result_timed_out':
              expect(now).toBeGreaterThanOrEqual(record.deadlines.resultDeadlineMs);
              break;
            case 'escalated':
              expect(event.type).toBe('escalate');
              break;
            case 'cancel_requested':
              expect(['cancel_requested', 'decide']).toContain(event.type);
              if (event.type === 'cancel_requested') expect(event.cancelIntent.reason.trim()).not.toBe('');
              break;
            case 'cancelling':
              expect(answer?.action === 'cancel' || event.type === 'decide').toBe(true);
              break;
            default:
              break;
          }
          expect(result.record.journal.nextSequence).toBe(record.journal.nextSequence + 1);
          reached.add(to);
          record = result.record;
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('the random sequences above did reach the guarded states (the property is not vacuous)', () => {
    for (const state of [
      'accepted',
      'observing',
      'result_collecting',
      'succeeded',
      'cancelling',
      'failed',
      'escalated',
      'closed',
    ] as const) {
      expect(reached.has(state), state).toBe(true);
    }
  });
});
