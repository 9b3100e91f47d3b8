/**
 * The audit's replay of deadlines and budgets (T5) against operations driven by the real core steps: every
 * escalation reason raised the way the steps raise it, every option the real escalation code offers for it decided
 * within its bounds, extension requests, cancel requests and provider answers in between. After every step the
 * snapshot the store would hold is checked by `checkSnapshot`, the function `asyncjob audit verify` runs: it must
 * find nothing. A bound edited by hand in that snapshot must still be a finding.
 */
import { snapshotHash } from '../../src/adapters/store/chain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { snapshotOf, toJournalEntry } from '../../src/activities/journal-writer';
import { type AuditOperationRow } from '../../src/adapters/store/audit-source';
import { canonicalJson } from '../../src/core/canonical-json';
import { type CollectOutcome } from '../../src/core/step';
import { replayBounds } from '../../src/audit/bound-facts';
import { checkSnapshot } from '../../src/audit/facts';
import { type Decision, type OfferedOption } from '../../src/core/escalation';
import { escalationReasonSchema, type EscalationReason, type JournalEntry } from '../../src/core/journal';
import { type Observation } from '../../src/core/observation';
import { intentEntryOf, type OperationRecord } from '../../src/core/operation';
import {
  afterCancel,
  afterCollect,
  afterCreate,
  afterReconcile,
  afterStatus,
  applyDecision,
  decisionDeadlinePassed,
  isRefusal,
  nextCommand,
  onWake,
  recordRejectedDecision,
  requestCancel,
  requestExtension,
  reserveCreateAttempt,
  type ReconciliationMethod,
  type StepContext,
  type StepResult,
} from '../../src/core/step';
import { Builder } from '../../src/core/step-draft';
import { FINAL_STATES } from '../../src/core/transitions';
import { newRecord, T0 } from '../core/helpers';

const POLICY = {
  baseDelayMs: 1_000,
  maxDelayMs: 8_000,
  notFoundWindowMs: 5_000,
  cancelDeadlineMs: 60_000,
  decisionDeadlineMs: 600_000,
  extensionMs: 300_000,
  extensionStatusRequests: 4,
  maxStatusRequests: 6,
  maxTransportFailures: 3,
  maxRateLimited: 2,
};
const SHA = 'b'.repeat(64);
const JOB = 'job_7ad2';
const APPROVER = 'bob@example.com';
const AGENT = 'agent:planner';
const REASONS = escalationReasonSchema.options;
/** Raised by an extension request (the real path), not by a step's own escalation. */
const RAISED_BY_STEPS = REASONS.filter((r) => r !== 'extension_requested');

/** How an operation is driven: the adapter's capabilities and reconciliation. */
interface Setup {
  cancel: boolean;
  repeatableCollect: boolean;
  reconciliation: ReconciliationMethod;
}

/** An operation as the store holds it: the record, every journal entry, and the clock. */
class Operation {
  record: OperationRecord = newRecord(POLICY, { resultDeadline: { afterMs: 900_000 } });
  readonly journal: JournalEntry[] = [];
  now = T0;
  /** Each decision taken: the escalation's reason, the option, and whether the workflow's step accepted it. */
  readonly decided: Array<[EscalationReason, string, boolean]> = [];

  constructor(readonly setup: Setup) {
    const r = this.record;
    const intent = intentEntryOf(r);
    this.journal.push(toJournalEntry(r.operationId, intent));
    for (const t of r.journal.transitions) this.journal.push(toJournalEntry(r.operationId, t));
  }

  ctx(actor = 'workflow'): StepContext {
    const { cancel, repeatableCollect, reconciliation } = this.setup;
    return { nowMs: this.now, random: 0.5, actor, capabilities: { cancel, repeatableCollect }, reconciliation };
  }

  commit(step: StepResult): void {
    this.record = step.record;
    for (const e of step.entries) this.journal.push(toJournalEntry(this.record.operationId, e));
    expect(this.journal.map((e) => e.sequence)).toEqual(this.journal.map((_, i) => i + 1));
  }

  /** Raises `reason` the way a step does (options from the real escalation code), unless escalated or final. */
  escalate(reason: EscalationReason): void {
    if (reason === 'extension_requested') {
      const asked = requestExtension(
        this.record,
        { requestedBy: AGENT, reason: 'the report covers three years', extendMs: 300_000 },
        this.ctx(AGENT),
      );
      if (!isRefusal(asked)) this.commit(asked);
      return;
    }
    const draft = new Builder(this.record, this.record);
    draft.escalate(reason, `property: ${reason}`, this.ctx());
    this.commit(draft.result());
  }

  /** Decides the open escalation with the offered option `offered`, its bounds scaled by `share` (0..1). */
  decide(offered: OfferedOption, share: number, pick: number): void {
    const escalation = this.record.escalation!;
    const scaled = (most: number | undefined): number => Math.round((most ?? 0) * share);
    const decision: Decision = {
      option: offered.option,
      approvedBy: APPROVER,
      reason: `property: ${offered.option}`,
      ...(offered.option === 'extend'
        ? {
            extendMs: Math.max(1, scaled(offered.extendMs)),
            extraStatusRequests: scaled(offered.extraStatusRequests),
            ...(offered.extraTransportFailures !== undefined
              ? { extraTransportFailures: scaled(offered.extraTransportFailures) }
              : {}),
            ...(offered.extraRateLimited !== undefined ? { extraRateLimited: scaled(offered.extraRateLimited) } : {}),
          }
        : {}),
      ...(offered.option === 'adopt_job' ? { jobId: offered.jobIds![pick % offered.jobIds!.length]! } : {}),
    };
    const step = applyDecision(this.record, decision, this.ctx(APPROVER));
    this.decided.push([escalation.reason, offered.option, !isRefusal(step)]);
    if (isRefusal(step)) {
      this.commit(recordRejectedDecision(this.record, decision, step, this.ctx(APPROVER)));
      return;
    }
    this.commit(step);
  }

  /** Runs the next command with a provider answer: `kind` picks a plausible one (0 benign ... 3 hostile). */
  advance(kind: number): 'finished' | 'escalated' | 'ran' {
    const r = this.record;
    const cmd = nextCommand(r, this.now, this.setup.reconciliation);
    const at = (): StepContext => ({ ...this.ctx(), nowMs: (this.now += 10) });
    switch (cmd.kind) {
      case 'finished':
        return 'finished';
      case 'await_decision':
        if (this.now < cmd.untilMs) return 'escalated';
        this.commit(decisionDeadlinePassed(r, this.ctx()));
        return 'finished';
      case 'wait':
        this.now = Math.max(this.now + 1, cmd.untilMs);
        return 'ran';
      case 'create': {
        const reserved = reserveCreateAttempt(r, this.ctx());
        if (reserved.kind === 'stopped') this.commit(reserved.step);
        else {
          this.record = reserved.record;
          this.commit(afterCreate(this.record, createAnswer(kind, this.now), at()));
        }
        return 'ran';
      }
      case 'reconcile':
        if (cmd.reservesCreateAttempt) {
          const reserved = reserveCreateAttempt(r, this.ctx());
          if (reserved.kind === 'stopped') {
            this.commit(reserved.step);
            return 'ran';
          }
          this.record = reserved.record;
        }
        this.commit(afterReconcile(this.record, reconcileAnswer(kind, this.now), at()));
        return 'ran';
      case 'read_status': {
        const woke = onWake(r, this.ctx());
        if (woke.kind === 'stopped') this.commit(woke.step);
        else if (woke.kind === 'read_status') {
          this.record = woke.record;
          this.commit(afterStatus(this.record, statusAnswer(kind, this.now), at()));
        } else this.now = Math.max(this.now + 1, woke.atMs);
        return 'ran';
      }
      case 'cancel':
        this.commit(
          afterCancel(
            r,
            { action: 'cancel', transport: 'response', signal: 'ok', httpStatus: 202, receivedAtMs: this.now },
            at(),
          ),
        );
        return 'ran';
      case 'collect': {
        const valid = kind < 3;
        this.commit(afterCollect(r, collectAnswer(this.now), collected(valid), at()));
        return 'ran';
      }
    }
  }

  /** Drives the operation with benign answers until it ends or waits on a decision. */
  finish(): 'finished' | 'escalated' {
    for (let i = 0; i < 400; i++) {
      const outcome = this.advance(0);
      if (outcome !== 'ran') return outcome;
    }
    throw new Error(`operation still ${this.record.localState} after 400 steps`);
  }

  /** The operations row and snapshot the store would hold now. */
  row(record: OperationRecord = this.record): AuditOperationRow {
    const snapshot = snapshotOf(record, this.now);
    return {
      provider: snapshot.provider,
      localState: snapshot.localState,
      remoteJobIds: snapshot.remoteJobIds,
      escalationReason: snapshot.escalationReason,
      resultDeadlineAtMs: Date.parse(snapshot.resultDeadlineAt!),
      updatedAt: snapshot.updatedAt,
      version: snapshot.version,
      snapshot: canonicalJson(snapshot),
      snapshotHash: snapshotHash(canonicalJson(snapshot)),
      snapshotKeyId: null,
      lastSequence: this.journal.length,
      lastHash: null,
    };
  }

  /** What `asyncjob audit verify` finds in this operation's snapshot against its journal. */
  findings(record: OperationRecord = this.record) {
    return checkSnapshot(record.operationId, this.row(record), this.journal, this.journal.length, undefined).findings;
  }
}

function createAnswer(kind: number, at: number): Observation {
  if (kind === 3) return { action: 'create', transport: 'ambiguous', signal: 'ambiguous', receivedAtMs: at };
  return {
    action: 'create',
    transport: 'response',
    signal: 'ok',
    httpStatus: 202,
    receivedAtMs: at,
    remoteJobId: JOB,
    remoteState: 'queued',
    category: 'pending',
  };
}

function reconcileAnswer(kind: number, at: number): Observation {
  if (kind === 3)
    return { action: 'reconcile', transport: 'response', signal: 'not_found', httpStatus: 404, receivedAtMs: at };
  return {
    action: 'reconcile',
    transport: 'response',
    signal: 'ok',
    httpStatus: 200,
    receivedAtMs: at,
    remoteJobId: JOB,
    remoteState: 'running',
    category: 'pending',
  };
}

function statusAnswer(kind: number, at: number): Observation {
  const base = { action: 'status' as const, transport: 'response' as const, receivedAtMs: at, remoteJobId: JOB };
  if (kind === 1) return { ...base, signal: 'ok', httpStatus: 200, remoteState: 'running', category: 'pending' };
  if (kind === 2) return { ...base, signal: 'rate_limited', httpStatus: 429 };
  if (kind === 3) return { ...base, signal: 'ok', httpStatus: 200, remoteState: 'manual_review', category: 'unknown' };
  return {
    ...base,
    signal: 'ok',
    httpStatus: 200,
    remoteState: 'succeeded',
    category: 'success',
    resultReference: { url: 'https://api.example.test/r', sha256: SHA },
  };
}

function collectAnswer(at: number): Observation {
  return { action: 'collect', transport: 'response', signal: 'ok', httpStatus: 200, receivedAtMs: at };
}

function collected(valid: boolean): CollectOutcome {
  const validation = valid ? 'valid' : 'invalid';
  const location = 'file:///artifacts/op-1';
  return {
    result: { artifactLocation: location, sha256: SHA, sizeBytes: 42, validation },
    artifact: { kind: 'artifact', location, sha256: SHA, sizeBytes: 42, validation },
  };
}

/** Where an escalation is raised: before a job exists, while observing, and while a sent cancel awaits its answer. */
const PHASES = ['create', 'observing', 'cancelling'] as const;

function inPhase(phase: (typeof PHASES)[number], setup: Setup): Operation {
  const op = new Operation(setup);
  if (phase === 'create') return op;
  op.advance(0); // create, answered 202 with a job
  if (phase === 'observing') return op;
  const asked = requestCancel(op.record, { requestedBy: APPROVER, reason: 'no longer needed' }, op.ctx(APPROVER));
  if (isRefusal(asked)) throw new Error(asked.message);
  op.commit(asked);
  op.advance(0); // the one cancel call, answered 202
  expect(op.record.localState).toBe('cancelling');
  return op;
}

function lastDecision(journal: readonly JournalEntry[]): JournalEntry | undefined {
  return journal.filter((e) => e.body.kind === 'decision').at(-1);
}

const FULL: Setup = { cancel: true, repeatableCollect: true, reconciliation: 'same_token_resend' };

describe('T5: deadlines and budgets replayed from the decisions that moved them', () => {
  const cases = PHASES.flatMap((phase) => REASONS.map((reason) => [phase, reason] as const)).filter(
    ([phase, reason]) => !(phase === 'create' && reason === 'extension_requested'),
  );

  it.each(cases)(
    'T5: %s phase, %s: every offered option, decided, then the operation finished, leaves an intact snapshot',
    (phase, reason) => {
      const offered = (() => {
        const op = inPhase(phase, FULL);
        op.escalate(reason);
        return op.record.escalation?.options ?? [];
      })();
      expect(offered.length).toBeGreaterThan(0);
      for (const option of offered) {
        const op = inPhase(phase, FULL);
        op.escalate(reason);
        expect(op.record.escalation?.reason).toBe(reason);
        op.now += 5_000;
        op.decide(option, 1, 0);
        expect(op.decided).toEqual([[reason, option.option, true]]);
        expect(op.findings()).toEqual([]);
        op.finish();
        expect(op.findings()).toEqual([]);
        // The replay is not vacuous: every bound is established by the journal and equals the record's.
        const fields = replayBounds(op.journal, op.record).map((b) => b.field);
        expect(fields).toEqual(
          expect.arrayContaining([
            'record.deadlines.createDeadlineMs',
            'record.deadlines.resultDeadlineMs',
            'record.deadlines.cancelDeadlineMs',
            'record.budgets.maxStatusRequests',
            'record.budgets.maxTransportFailures',
            'record.budgets.maxRateLimited',
          ]),
        );
      }
    },
  );

  it('T5: retry_create_same_token moves the create deadline, and the audit replays it from the decision entry', () => {
    const op = new Operation(FULL);
    op.escalate('create_unknown');
    op.now += 100_000;
    const before = op.record.deadlines.createDeadlineMs;
    const offered = op.record.escalation!.options.find((o) => o.option === 'retry_create_same_token');
    expect(offered).toBeDefined();
    op.decide(offered!, 1, 0);
    expect(op.record.deadlines.createDeadlineMs).toBeGreaterThan(before);
    const entry = lastDecision(op.journal);
    expect(entry?.body).toMatchObject({
      effects: { createDeadlineAt: new Date(op.record.deadlines.createDeadlineMs).toISOString() },
    });
    expect(op.findings()).toEqual([]);
  });

  it('T5: a bound edited by hand in the snapshot is still a finding, naming the field and the entry that set it', () => {
    const op = inPhase('observing', FULL);
    op.escalate('request_budget_exhausted');
    const extend = op.record.escalation!.options.find((o) => o.option === 'extend')!;
    op.decide(extend, 1, 0);
    const decisionSequence = lastDecision(op.journal)!.sequence;
    expect(op.findings()).toEqual([]);
    const r = op.record;
    const edits: Array<[string, OperationRecord]> = [
      [
        'record.deadlines.createDeadlineMs',
        { ...r, deadlines: { ...r.deadlines, createDeadlineMs: r.deadlines.createDeadlineMs + 1 } },
      ],
      [
        'record.deadlines.resultDeadlineMs',
        { ...r, deadlines: { ...r.deadlines, resultDeadlineMs: r.deadlines.resultDeadlineMs + 1 } },
      ],
      [
        'record.deadlines.cancelDeadlineMs',
        { ...r, deadlines: { ...r.deadlines, cancelDeadlineMs: r.deadlines.resultDeadlineMs } },
      ],
      [
        'record.budgets.maxStatusRequests',
        { ...r, budgets: { ...r.budgets, maxStatusRequests: r.budgets.maxStatusRequests + 1 } },
      ],
      ['record.budgets.maxTransportFailures', { ...r, budgets: { ...r.budgets, maxTransportFailures: 99 } }],
      ['record.budgets.maxRateLimited', { ...r, budgets: { ...r.budgets, maxRateLimited: 99 } }],
    ];
    for (const [field, edited] of edits) {
      const [finding] = op.findings(edited);
      expect(finding).toMatchObject({ problem: 'snapshot_mismatch' });
      expect(`${finding!.expected} ${finding!.found}`).toContain(field);
    }
    const [extended] = op.findings(edits[1]![1]);
    expect(extended).toMatchObject({ sequence: decisionSequence });
  });

  it('T5: over random sequences of escalations, decisions, extension and cancel requests and provider answers, the audit expects exactly the record', () => {
    const offeredPairs = new Set<string>();
    const decidedPairs = new Set<string>();
    const acceptedReasons = new Set<string>();
    const attempts = new Map<string, number>();
    const tries = (reason: string, option: string): number => attempts.get(`${reason}/${option}`) ?? 0;
    const action = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.record({ kind: fc.constant('escalate' as const), reason: fc.constantFrom(...RAISED_BY_STEPS) }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('extension' as const) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const) }) },
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant('decide' as const),
          pick: fc.integer({ min: 0, max: 9 }),
          share: fc.double({ min: 0, max: 1, noNaN: true }),
          laterMs: fc.integer({ min: 0, max: 700_000 }),
        }),
      },
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant('answer' as const),
          answer: fc.integer({ min: 0, max: 3 }),
          delayMs: fc.integer({ min: 0, max: 200_000 }),
        }),
      },
    );
    fc.assert(
      fc.property(
        fc.array(action, { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom<ReconciliationMethod>('same_token_resend', 'lookup_by_token', 'none'),
        fc.constantFrom(...PHASES),
        (actions, cancel, repeatableCollect, reconciliation, phase) => {
          // A sent cancel needs a cancel endpoint: without one, start from the other phases.
          const start = phase === 'cancelling' && !cancel ? 'observing' : phase;
          const op = inPhase(start, { cancel, repeatableCollect, reconciliation });
          for (const a of actions) {
            if (FINAL_STATES.includes(op.record.localState)) break;
            if (a.kind === 'escalate') op.escalate(a.reason);
            else if (a.kind === 'extension') op.escalate('extension_requested');
            else if (a.kind === 'cancel') {
              const asked = requestCancel(op.record, { requestedBy: APPROVER, reason: 'stop' }, op.ctx(APPROVER));
              if (!isRefusal(asked)) op.commit(asked);
            } else if (a.kind === 'decide' && op.record.escalation !== null) {
              const { options, reason } = op.record.escalation;
              for (const o of options) offeredPairs.add(`${reason}/${o.option}`);
              op.now += a.laterMs;
              // An option never tried for this reason first, so every offered option is reached whatever the draw.
              const fresh = options.find((o) => tries(reason, o.option) === 0);
              const chosen = fresh ?? options[a.pick % options.length]!;
              attempts.set(`${reason}/${chosen.option}`, tries(reason, chosen.option) + 1);
              op.decide(chosen, a.share, a.pick);
            } else if (a.kind === 'answer') {
              op.now += a.delayMs;
              op.advance(a.answer);
            }
            expect(op.findings()).toEqual([]);
          }
          for (const [reason, option, accepted] of op.decided) {
            decidedPairs.add(`${reason}/${option}`);
            if (accepted) acceptedReasons.add(reason);
          }
        },
      ),
      // A fixed seed: the coverage check below must not depend on the draw.
      { numRuns: 500, seed: 20261129 },
    );
    // Not vacuous: every option offered for every reason was decided in some run (accepted, or refused by the
    // step and journalled as refused), and decisions were accepted for every reason.
    expect([...offeredPairs].filter((pair) => !decidedPairs.has(pair))).toEqual([]);
    expect(acceptedReasons).toEqual(new Set(REASONS));
  });
});
