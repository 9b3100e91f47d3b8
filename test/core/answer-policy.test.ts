/**
 * The answer policy, cell by cell: for every call and every signal, the step that reads that call's answer does
 * what `ANSWER_POLICY[call][signal]` says. Each answer is built as the adapters would classify it, so the table,
 * the classifier and the steps are checked together.
 */
import { describe, expect, it } from 'vitest';
import { answerSignal } from '../../src/adapters/providers/answer-signal';
import {
  ANSWER_POLICY,
  answerSignalSchema,
  countAnswer,
  type AnswerSignal,
  type ProviderCall,
  type Reaction,
} from '../../src/core/answer-policy';
import { type Observation } from '../../src/core/observation';
import { type OperationRecord } from '../../src/core/operation';
import {
  afterCancel,
  afterCollect,
  afterCreate,
  afterReconcile,
  afterStatus,
  onWake,
  requestCancel,
  reserveCreateAttempt,
  type StepContext,
  type StepResult,
} from '../../src/core/step';
import { T0, newRecord, observed } from './helpers';

const SHA = 'a'.repeat(64);
const POLICY = { baseDelayMs: 1_000, maxDelayMs: 8_000, notFoundWindowMs: 5_000, cancelDeadlineMs: 600_000 };

function ctx(nowMs: number, over: Partial<StepContext> = {}): StepContext {
  return {
    nowMs,
    random: 0.5,
    actor: 'workflow',
    capabilities: { cancel: true, repeatableCollect: true },
    reconciliation: 'lookup_by_token',
    ...over,
  };
}

/** What an exchange with `signal` looks like as the adapters hand it over (status, transport, category). */
const SHAPES: Record<AnswerSignal, Partial<Observation>> = {
  ok: { httpStatus: 200 },
  unreadable: { httpStatus: 200, parseProblem: 'the body is not JSON' },
  several_jobs: { httpStatus: 200, errorCategory: 'multiple_matches', parseProblem: '2 provider jobs match' },
  conflict: { httpStatus: 409 },
  rate_limited: { httpStatus: 429 },
  unavailable: { httpStatus: 503 },
  auth_denied: { httpStatus: 403 },
  not_found: { httpStatus: 404 },
  unsupported: { httpStatus: 501 },
  client_error: { httpStatus: 422 },
  server_error: { httpStatus: 502 },
  unexpected: { httpStatus: 302 },
  too_large: { transport: 'body_too_large', httpStatus: 200 },
  not_sent: { transport: 'not_sent', errorCategory: 'connect_refused' },
  ambiguous: { transport: 'ambiguous', errorCategory: 'timeout_after_send' },
  refused: { transport: 'refused', errorCategory: 'foreign_origin', parseProblem: 'the URL is on another origin' },
  no_credential: { transport: 'refused', errorCategory: 'credential_unavailable' },
};

/** An answer to `call` with `signal`, and for an `ok` the body each call reads. */
function answer(call: ProviderCall, signal: AnswerSignal, at: number): Observation {
  const readable: Partial<Observation> =
    signal !== 'ok'
      ? {}
      : call === 'status'
        ? { remoteJobId: 'job_1', remoteState: 'running', category: 'pending' }
        : call === 'create' || call === 'reconcile'
          ? { remoteJobId: 'job_1', remoteState: 'queued', category: 'pending' }
          : {};
  const o = observed({ action: call, transport: 'response', receivedAtMs: at, ...SHAPES[signal], ...readable });
  expect(o.signal, `the shape for ${signal} classifies as ${answerSignal(o)}`).toBe(signal);
  return o;
}

/** A record waiting for `call`'s answer, and the time it is answered. */
function before(call: ProviderCall): { record: OperationRecord; at: number } {
  const reserved = reserveCreateAttempt(newRecord(POLICY), ctx(T0 + 500));
  if (reserved.kind !== 'reserved') throw new Error('create not reserved');
  if (call === 'create') return { record: reserved.record, at: T0 + 1_000 };
  if (call === 'reconcile') {
    const lost = afterCreate(reserved.record, answer('create', 'ambiguous', T0 + 1_000), ctx(T0 + 1_000)).record;
    expect(lost.localState).toBe('reconciliation');
    return { record: lost, at: T0 + 2_000 };
  }
  const accepted = afterCreate(reserved.record, answer('create', 'ok', T0 + 1_000), ctx(T0 + 1_000)).record;
  const at = accepted.schedule.nextPollAtMs!;
  const woke = onWake(accepted, ctx(at));
  if (woke.kind !== 'read_status') throw new Error('no status read');
  if (call === 'status') return { record: woke.record, at: at + 10 };
  if (call === 'collect') {
    const done = observed({
      action: 'status',
      transport: 'response',
      httpStatus: 200,
      receivedAtMs: at + 10,
      remoteJobId: 'job_1',
      remoteState: 'succeeded',
      category: 'success',
      resultReference: { url: 'https://api.example.test/r', sha256: SHA },
    });
    const collecting = afterStatus(woke.record, done, ctx(at + 10)).record;
    expect(collecting.localState).toBe('result_collecting');
    return { record: collecting, at: at + 20 };
  }
  const observing = afterStatus(woke.record, answer('status', 'ok', at + 10), ctx(at + 10)).record;
  const requested = requestCancel(observing, { requestedBy: 'alice@example.com', reason: 'stop' }, ctx(at + 20));
  if (requested.kind !== 'step') throw new Error('cancel refused');
  return { record: requested.record, at: at + 30 };
}

/** Runs `call`'s step on an answer with `signal`. */
function run(call: ProviderCall, signal: AnswerSignal): { before: OperationRecord; after: OperationRecord } {
  const { record, at } = before(call);
  const o = answer(call, signal, at);
  const c = ctx(at);
  const steps: Record<ProviderCall, () => StepResult> = {
    create: () => afterCreate(record, o, c),
    reconcile: () => afterReconcile(record, o, c),
    status: () => afterStatus(record, o, c),
    cancel: () => afterCancel(record, o, c),
    collect: () =>
      afterCollect(
        record,
        o,
        { result: { artifactLocation: 'file:///a/r', sha256: SHA, sizeBytes: 2, validation: 'valid' } },
        c,
      ),
  };
  return { before: record, after: steps[call]().record };
}

/** What each call's state is after a `read` of a readable answer. */
const READ_STATE: Record<ProviderCall, string> = {
  create: 'accepted',
  reconcile: 'accepted',
  status: 'observing',
  cancel: 'cancelling',
  collect: 'succeeded',
};

const CELLS = (Object.keys(ANSWER_POLICY) as ProviderCall[]).flatMap((call) =>
  answerSignalSchema.options.map((signal) => [call, signal, ANSWER_POLICY[call][signal]] as const),
);

/** How a reaction reads in a test title. */
const said = (r: Reaction): string =>
  r.kind === 'escalate' ? `escalate ${r.reason}` : r.kind === 'retry' ? `retry on the ${r.budget} budget` : r.kind;

describe('the answer policy, cell by cell (H1-H5, S5, U1-U2, X1-X3, R5)', () => {
  it('covers every call and every signal', () => {
    expect(CELLS).toHaveLength(5 * answerSignalSchema.options.length);
  });

  it.each(CELLS.map(([call, signal, reaction]) => [call, signal, said(reaction), reaction] as const))(
    '%s answered %s: %s',
    (call, signal, _said, reaction) => {
      const { before: was, after } = run(call, signal);
      switch (reaction.kind) {
        case 'escalate':
          expect(after.localState).toBe('escalated');
          expect(after.escalation?.reason).toBe(reaction.reason);
          break;
        case 'read':
          expect(after.localState).toBe(signal === 'ok' || call === 'cancel' ? READ_STATE[call] : after.localState);
          expect(after.escalation).toBeNull();
          break;
        case 'retry':
          expect(after.localState).toBe(was.localState);
          expect(after.escalation).toBeNull();
          expect(after.schedule.nextPollAtMs).toBeGreaterThan(T0);
          if (call === 'cancel') expect(after.cancel?.sentAtMs).toBeUndefined();
          break;
        case 'reconcile':
          expect(after.localState).toBe('reconciliation');
          break;
        case 'no_job':
          expect(after.escalation).toBeNull();
          expect(after.reconcileBy).toBe('resend');
          break;
        case 'not_found_window':
          expect(after.localState).toBe(was.localState);
          expect(after.escalation).toBeNull();
          break;
      }
    },
  );
});

describe('counting is the same on every call (H1, S5)', () => {
  const calls = Object.keys(ANSWER_POLICY) as ProviderCall[];
  const used = { ...newRecord().used, rateLimited: 1, consecutiveRateLimited: 1 };

  it.each(calls)('H1: on %s, a 429 extends the run of 429s in a row', (call) => {
    expect(countAnswer(used, call, 'rate_limited').consecutiveRateLimited).toBe(2);
  });

  it.each(calls)('H1: on %s, a connection that never got through leaves the run of 429s as it was', (call) => {
    for (const signal of ['not_sent', 'ambiguous', 'refused', 'no_credential'] as const)
      expect(countAnswer(used, call, signal).consecutiveRateLimited).toBe(1);
  });

  it.each(calls)('H1: on %s, any other answer that got through ends the run of 429s', (call) => {
    for (const signal of ['ok', 'server_error', 'unavailable', 'not_found', 'too_large'] as const)
      expect(countAnswer(used, call, signal).consecutiveRateLimited).toBe(0);
  });

  it.each(calls)('H5, S5: on %s, a transport failure counts against its budget', (call) => {
    for (const signal of ['not_sent', 'ambiguous', 'server_error', 'unavailable'] as const)
      expect(countAnswer(used, call, signal).transportFailures).toBe(used.transportFailures + 1);
  });
});
