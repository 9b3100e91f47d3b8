import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Observation } from '../../src/core/observation';
import {
  OBSERVATION_TAIL,
  TRANSITION_TAIL,
  operationRecordSchema,
  type OperationRecord,
} from '../../src/core/operation';
import { foldOutcome, outcomeOf, outcomeOfRecord, tailEntries, withoutTails } from '../../src/core/step-outcome';
import {
  afterCreate,
  afterStatus,
  onWake,
  reserveCreateAttempt,
  type StepContext,
  type StepEntry,
  type StepResult,
} from '../../src/core/step';
import { T0, newRecord } from './helpers';

const ctx = (nowMs: number, random = 0.5): StepContext => ({
  nowMs,
  random,
  actor: 'workflow',
  capabilities: { cancel: true, repeatableCollect: true },
  reconciliation: 'same_token_resend',
});
const POLICY = { baseDelayMs: 1_000, maxDelayMs: 4_000, maxStatusRequests: 1_000 };
const accepted = (at: number): Observation => ({
  action: 'create',
  transport: 'response',
  signal: 'ok',
  httpStatus: 202,
  receivedAtMs: at,
  remoteJobId: 'job_1',
});
const status = (at: number, state: string): Observation => ({
  action: 'status',
  transport: 'response',
  signal: state === 'flaky' ? 'unavailable' : 'ok',
  httpStatus: state === 'flaky' ? 503 : 200,
  receivedAtMs: at,
  remoteJobId: 'job_1',
  ...(state === 'flaky' ? {} : { remoteState: state, category: 'pending' as const }),
});

/** The way the workflow runs a step at an activity: the state goes in, `{state, entries}` comes back and is folded. */
function viaActivity(held: OperationRecord, step: (r: OperationRecord) => StepResult): OperationRecord {
  return foldOutcome(held, outcomeOf(step(withoutTails(held))));
}

/** Runs create then `answers.length` status reads, each step either with whole tails or through `viaActivity`. */
function run(answers: readonly string[], throughActivities: boolean): OperationRecord {
  const apply = (held: OperationRecord, step: (r: OperationRecord) => StepResult) =>
    throughActivities ? viaActivity(held, step) : step(held).record;
  let r = newRecord(POLICY);
  let now = T0 + 100;
  const reserved = reserveCreateAttempt(r, ctx(now));
  if (reserved.kind !== 'reserved') throw new Error(`expected a reservation, got ${reserved.kind}`);
  r = apply(reserved.record, (x) => afterCreate(x, accepted(now + 5), ctx(now + 5)));
  for (const answer of answers) {
    now = Math.max(now + 10, r.schedule.nextPollAtMs ?? now);
    const woke = onWake(r, ctx(now));
    if (woke.kind !== 'read_status') break;
    r = apply(woke.record, (x) => afterStatus(x, status(now + 5, answer), ctx(now + 5)));
  }
  return r;
}

describe('step outcomes on the activity boundary (T3: the journal keeps everything, the record a bounded tail)', () => {
  it('leaves the tails out of what an activity receives and keeps the rest of the record', () => {
    const r = run(['running'], false);
    const sent = withoutTails(r);
    expect(sent.journal).toEqual({ nextSequence: r.journal.nextSequence, transitions: [], observations: [] });
    expect({ ...sent, journal: undefined }).toEqual({ ...r, journal: undefined });
    expect(operationRecordSchema.safeParse(sent).success).toBe(true);
  });

  it('gives the same record as whole tails would, step after step, past the tail bounds', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('queued', 'running', 'flaky'), { minLength: 1, maxLength: 3 * OBSERVATION_TAIL }),
        (answers) => {
          expect(run(answers, true)).toEqual(run(answers, false));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps the tails bounded', () => {
    const r = run(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? 'running' : 'queued')),
      true,
    );
    expect(r.used.statusRequests).toBe(40);
    expect(r.journal.observations).toHaveLength(OBSERVATION_TAIL);
    expect(r.journal.transitions.length).toBeLessThanOrEqual(TRANSITION_TAIL);
    const sequences = r.journal.observations.map((o) => o.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(sequences.at(-1)).toBe(r.journal.nextSequence - 1);
  });

  it('replaces held entries by the returned ones from their first sequence (an adopted stored state)', () => {
    const held = run(['running', 'running'], false);
    const last = held.journal.observations.at(-1)!;
    const stored = { ...last, actor: 'other-run' };
    const adopted = foldOutcome(held, { state: withoutTails(held), entries: [stored] });
    expect(adopted.journal.observations.at(-1)).toEqual(stored);
    expect(adopted.journal.observations.filter((o) => o.sequence === last.sequence)).toHaveLength(1);
  });

  it("a record's own tail entries as an outcome (a new operation's first write) fold back to the same record", () => {
    const fresh = newRecord(POLICY);
    const first = outcomeOfRecord(fresh);
    expect(first.state).toEqual(withoutTails(fresh));
    expect(first.entries.map((e) => e.body.kind)).toEqual(['transition']);
    expect(foldOutcome(withoutTails(fresh), first)).toEqual(fresh);
    const held = run(['running'], false);
    expect(foldOutcome(withoutTails(held), outcomeOfRecord(held))).toEqual(held);
  });

  it('keeps the tail entries of stored journal entries, bounded, skipping kinds the tails do not keep', () => {
    const r = run(['running', 'queued'], false);
    const intent = { sequence: 1, atMs: T0, actor: 'svc:billing', body: { kind: 'intent' } } as unknown as StepEntry;
    const stored = [intent, ...[...r.journal.transitions, ...r.journal.observations]].sort(
      (a, b) => a.sequence - b.sequence,
    );
    const kept = tailEntries(stored);
    expect(kept.map((e) => e.sequence)).not.toContain(1);
    expect(foldOutcome(withoutTails(r), { state: withoutTails(r), entries: kept })).toEqual(r);
    const many = run(
      Array.from({ length: 3 * OBSERVATION_TAIL }, () => 'running'),
      false,
    );
    const all = [...many.journal.transitions, ...many.journal.observations];
    expect(tailEntries(all).filter((e) => e.body.kind === 'observation')).toHaveLength(OBSERVATION_TAIL);
  });
});
