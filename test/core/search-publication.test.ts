import { describe, expect, it } from 'vitest';
import { type Observation } from '../../src/core/observation';
import { type OperationRecord } from '../../src/core/operation';
import { type PollPolicyInput } from '../../src/core/policy';
import { SEARCH_ATTRIBUTES } from '../../src/core/search-attribute-names';
import { currentDetails, publicationKey, searchedFacts, UPSERT_ON_CHANGE_OF } from '../../src/core/search-publication';
import {
  afterCreate,
  afterStatus,
  applyDecision,
  onWake,
  reserveCreateAttempt,
  type StepContext,
} from '../../src/core/step';
import { TRANSITIONS } from '../../src/core/transitions';
import { T0, newRecord, obs, observed } from './helpers';

const POLICY: PollPolicyInput = { baseDelayMs: 1_000, maxDelayMs: 1_000, maxStatusRequests: 25 };
const ctx = (nowMs: number): StepContext => ({
  nowMs,
  random: 0.5,
  actor: 'workflow',
  capabilities: { cancel: true, repeatableCollect: true },
  reconciliation: 'same_token_resend',
});
const answer = (at: number, p: Partial<Observation>): Observation =>
  obs({ receivedAtMs: at, remoteJobId: 'job_7ad2', remoteState: 'running', category: 'pending', ...p });

/** A record accepted with job `job_7ad2` through the create step. */
function accepted(): OperationRecord {
  const reserved = reserveCreateAttempt(newRecord(POLICY), ctx(T0 + 500));
  if (reserved.kind !== 'reserved') throw new Error('create not reserved');
  const created: Observation = observed({
    action: 'create',
    transport: 'response',
    httpStatus: 202,
    receivedAtMs: T0 + 1_000,
    remoteJobId: 'job_7ad2',
    statusUrl: 'https://api.example.test/jobs/job_7ad2',
  });
  return afterCreate(reserved.record, created, ctx(T0 + 1_000)).record;
}

/** One status read at the record's next poll time, answered with `p`. */
function read(record: OperationRecord, p: Partial<Observation> = {}): OperationRecord {
  const at = record.schedule.nextPollAtMs!;
  const woke = onWake(record, ctx(at));
  if (woke.kind !== 'read_status') throw new Error(`expected a status read, got ${woke.kind}`);
  return afterStatus(woke.record, answer(at + 10, p), ctx(at + 10)).record;
}

/** The records after each of `reads` status reads of a running job (progress rising), then the budget's end. */
function readsOf(reads: number): OperationRecord[] {
  const records = [accepted()];
  for (let i = 1; i <= reads; i++) records.push(read(records.at(-1)!, { progress: i }));
  return records;
}

/** How many upserts a sequence of published records costs (the key compared with the last one published). */
function upserts(records: OperationRecord[]): number {
  return records.map(publicationKey).filter((key, i, keys) => i === 0 || key !== keys[i - 1]).length;
}

describe('search attributes and current details (E1, E2)', () => {
  it('E1: a record gives a value for every search attribute asyncjob registers', () => {
    const record = read(accepted());
    expect(Object.keys(searchedFacts(record)).sort()).toEqual(Object.keys(SEARCH_ATTRIBUTES).sort());
    expect(searchedFacts(record)).toEqual({
      AsyncJobState: 'observing',
      AsyncJobProvider: 'acme',
      AsyncJobProviderJobId: 'job_7ad2',
      AsyncJobEscalationReason: null,
      AsyncJobResultDeadline: T0 + 3_600_000,
    });
  });

  it('E1: the upsert key is state|job ID|reason, the string recorded runs compared (their upserts replay)', () => {
    expect(UPSERT_ON_CHANGE_OF).toEqual(['AsyncJobState', 'AsyncJobProviderJobId', 'AsyncJobEscalationReason']);
    expect(publicationKey(newRecord(POLICY))).toBe('create_pending||');
    expect(publicationKey(accepted())).toBe('accepted|job_7ad2|');
    const escalated = readsOf(25).at(-1)!;
    expect(escalated.localState).toBe('escalated');
    expect(publicationKey(escalated)).toBe('escalated|job_7ad2|request_budget_exhausted');
  });

  it.each([3, 24])(
    'E1: %i status reads of a running job cost the same upserts: one per state change, none per read',
    (reads) => {
      const records = readsOf(reads);
      // Every read changed the counters, the next poll time and the progress, and none of them is searched.
      const counters = records.map((r) => r.used.statusRequests);
      expect(new Set(counters).size).toBe(records.length);
      expect(new Set(records.map((r) => r.remote.progress ?? null)).size).toBe(records.length);
      expect(records.slice(1).every((r) => r.localState === 'observing')).toBe(true);
      expect(upserts(records)).toBe(2);
    },
  );

  it('E1: the budget exhausted at the last read is one upsert more, carrying the reason', () => {
    const records = readsOf(25);
    expect(upserts(records)).toBe(3);
    expect(searchedFacts(records.at(-1)!).AsyncJobEscalationReason).toBe('request_budget_exhausted');
  });

  it('E1, A2: the result deadline moves only with a decision, and every decision leaves escalated (its upsert carries it)', () => {
    expect(TRANSITIONS.filter((t) => t.event === 'decide').every((t) => t.to !== 'escalated')).toBe(true);
    const escalated = readsOf(25).at(-1)!;
    const at = escalated.escalation!.raisedAtMs + 1_000;
    const step = applyDecision(
      escalated,
      { option: 'extend', extendMs: 600_000, extraStatusRequests: 4, approvedBy: 'bob@example.com', reason: 'large' },
      ctx(at),
    );
    if ('kind' in step && step.kind === 'refused') throw new Error(`refused: ${step.message}`);
    expect(publicationKey(step.record)).not.toBe(publicationKey(escalated));
    expect(searchedFacts(step.record)).toMatchObject({
      AsyncJobState: 'observing',
      AsyncJobEscalationReason: null,
      AsyncJobResultDeadline: Math.max(T0 + 3_600_000, at) + 600_000,
    });
  });

  it('E2: the current details follow the status requests of every read, not only the state changes', () => {
    const records = readsOf(3);
    expect(currentDetails(records[0]!)).toBe('State **accepted**, provider job `job_7ad2`; status requests 0 of 25.');
    expect(currentDetails(records[3]!)).toBe('State **observing**, provider job `job_7ad2`; status requests 3 of 25.');
  });

  it('E2: the current details of an escalation end with the commands that answer it', () => {
    const escalated = readsOf(25).at(-1)!;
    const details = currentDetails(escalated);
    expect(details.startsWith('**Escalated: request_budget_exhausted**\n\n- ')).toBe(true);
    expect(details).toContain('- Status requests: 25 of 25');
    expect(details).toMatch(/Decide with one of:\n\n {4}asyncjob decide op-1 --option /);
  });
});
