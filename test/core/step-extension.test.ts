import { describe, expect, it } from 'vitest';
import { deciderPolicySchema, inForce } from '../../src/core/decider-policy';
import { type OperationRecord } from '../../src/core/operation';
import {
  applyDecision,
  extensionRequestSchema,
  isRefusal,
  requestExtension,
  type StepContext,
  type StepRefusal,
  type StepResult,
} from '../../src/core/step';
import { T0, newRecord, observingRecord } from './helpers';

const ctx = (nowMs: number): StepContext => ({
  nowMs,
  random: 0.5,
  actor: 'workflow',
  capabilities: { cancel: true, repeatableCollect: true },
  reconciliation: 'same_token_resend',
});
const AGENT = 'agent:research-bot';
/** Within what the escalation offers (the default policy: 15 minutes and 4 checks). */
const ask = { requestedBy: AGENT, reason: 'the report covers three years', extendMs: 600_000, extraStatusRequests: 4 };

function applied(result: StepResult | StepRefusal): StepResult {
  if (isRefusal(result)) throw new Error(`refused: ${result.code} ${result.message}`);
  return result;
}

/** The journal entry of `requester`'s request joining `escalated`'s open escalation at `atMs` (D4). */
function joinEntry(escalated: OperationRecord, requester: string, atMs: number) {
  return {
    sequence: escalated.journal.nextSequence,
    atMs,
    actor: requester,
    body: {
      kind: 'escalation_joined',
      escalation: escalated.escalation!.id,
      requestedBy: requester,
      request: `${requester} asks for 600 s more and 4 more status checks: ${ask.reason}`,
    },
  };
}

function escalatedByAgent(): OperationRecord {
  return applied(requestExtension(observingRecord(), ask, ctx(T0 + 2_000))).record;
}

describe('extension requests: an agent asks, only a human grants (G2)', () => {
  it('G2: a running job escalates as extension_requested, named for its requester, with extend and keep_bounds offered', () => {
    const step = applied(requestExtension(observingRecord(), ask, ctx(T0 + 2_000)));
    expect(step.record.localState).toBe('escalated');
    expect(step.record.escalation?.reason).toBe('extension_requested');
    expect(step.record.escalation?.requestedBy).toBe(AGENT);
    expect(step.record.escalation?.options.map((o) => o.option)).toEqual([
      'extend',
      'keep_bounds',
      'cancel_at_provider',
      'close',
      'inspect_provider_console',
    ]);
    const escalation = step.entries.find((e) => e.body.kind === 'escalation');
    expect(escalation?.actor).toBe(AGENT);
    expect(JSON.stringify(escalation?.body)).toContain('the report covers three years');
  });

  it('G2: the requester cannot grant its own request; a human can, within the offered bounds', () => {
    const record = escalatedByAgent();
    const offered = record.escalation!.options.find((o) => o.option === 'extend')!;
    const self = applyDecision(
      record,
      {
        option: 'extend',
        approvedBy: AGENT,
        reason: 'I need it',
        extendMs: offered.extendMs,
        extraStatusRequests: offered.extraStatusRequests,
      },
      ctx(T0 + 3_000),
    );
    expect(isRefusal(self) && self.code).toBe('ASYNCJOB_ERR_SELF_APPROVAL');
    const granted = applied(
      applyDecision(
        record,
        {
          option: 'extend',
          approvedBy: 'alice@example.com',
          reason: 'the long report is expected',
          extendMs: offered.extendMs,
          extraStatusRequests: offered.extraStatusRequests,
        },
        ctx(T0 + 3_000),
      ),
    );
    expect(granted.record.localState).toBe('observing');
    expect(granted.record.budgets.maxStatusRequests).toBe(
      record.budgets.maxStatusRequests + offered.extraStatusRequests!,
    );
  });

  it('G2: keep_bounds declines the request: polling goes on now with the bounds unchanged', () => {
    const record = escalatedByAgent();
    const declined = applied(
      applyDecision(
        record,
        { option: 'keep_bounds', approvedBy: 'alice@example.com', reason: 'the budget stands' },
        ctx(T0 + 3_000),
      ),
    );
    expect(declined.record.localState).toBe('observing');
    expect(declined.record.budgets).toEqual(record.budgets);
    expect(declined.record.deadlines.resultDeadlineMs).toBe(record.deadlines.resultDeadlineMs);
    expect(declined.record.schedule.nextPollAtMs).toBe(T0 + 3_000);
  });

  it('G2: a request joins an open escalation, and is refused for a final operation or before a job exists', () => {
    const escalated = escalatedByAgent();
    const joined = applied(requestExtension(escalated, ask, ctx(T0 + 4_000)));
    expect(joined.entries).toEqual([joinEntry(escalated, AGENT, T0 + 4_000)]);
    expect(joined.record.escalation).toEqual(escalated.escalation);
    expect(joined.record.journal.nextSequence).toBe(escalated.journal.nextSequence + 1);
    expect(joined.record.extensionRequestsAtMs).toEqual([T0 + 2_000, T0 + 4_000]);
    const before = requestExtension(newRecord(), ask, ctx(T0 + 100));
    expect(isRefusal(before) && before.code).toBe('ASYNCJOB_ERR_EXTENSION_NOT_APPLICABLE');
    const final = requestExtension({ ...observingRecord(), localState: 'succeeded' }, ask, ctx(T0 + 100));
    expect(isRefusal(final) && final.code).toBe('ASYNCJOB_ERR_OPERATION_FINAL');
  });
});

/** A decider policy whose on-call group may extend by at most `largestExtensionMs` and `mostExtraChecks`. */
function deciders(rule: Record<string, unknown>, extensionRequests = { most: 3, withinMs: 3_600_000 }) {
  return inForce(
    deciderPolicySchema.parse({
      deciders: [],
      groups: { oncall: ['alice@example.com'] },
      rules: [{ name: 'oncall', who: ['group:oncall'], providers: ['*'], reasons: ['*'], ...rule }],
      signatures: { options: [] },
      extensionRequests,
    }),
  );
}

function refusedWith(result: StepResult | StepRefusal): { code: string; message: string } {
  if (!isRefusal(result)) throw new Error('expected a refusal');
  return { code: result.code, message: result.message };
}

describe('extension requests are bounded (D4)', () => {
  it('D4: a request for more than the escalation offers is refused naming the bound', () => {
    expect(
      refusedWith(requestExtension(observingRecord(), { ...ask, extraStatusRequests: 10 }, ctx(T0 + 2_000))),
    ).toEqual({
      code: 'ASYNCJOB_ERR_EXTENSION_BEYOND_GRANT',
      message: 'extraStatusRequests: at most 4 can be granted, asked 10',
    });
    expect(refusedWith(requestExtension(observingRecord(), { ...ask, extendMs: 1_200_000 }, ctx(T0 + 2_000)))).toEqual({
      code: 'ASYNCJOB_ERR_EXTENSION_BEYOND_GRANT',
      message: 'extendMs: at most 900000 (15m) can be granted, asked 1200000',
    });
    const both = refusedWith(
      requestExtension(observingRecord(), { ...ask, extendMs: 1_200_000, extraStatusRequests: 5 }, ctx(T0 + 2_000)),
    );
    expect(both.message).toBe(
      'extendMs: at most 900000 (15m) can be granted, asked 1200000; extraStatusRequests: at most 4 can be granted, asked 5',
    );
    const exact = requestExtension(observingRecord(), { ...ask, extendMs: 900_000 }, ctx(T0 + 2_000));
    expect(isRefusal(exact)).toBe(false);
  });

  it("D4: a request for more than the decider policy's largest grant is refused naming the bound", () => {
    const policy = deciders({ options: ['extend', 'keep_bounds'], largestExtensionMs: 300_000, mostExtraChecks: 2 });
    const withPolicy = { ...ctx(T0 + 2_000), deciders: policy };
    expect(refusedWith(requestExtension(observingRecord(), ask, withPolicy))).toEqual({
      code: 'ASYNCJOB_ERR_EXTENSION_BEYOND_GRANT',
      message:
        'extendMs: at most 300000 (5m) can be granted, asked 600000; extraStatusRequests: at most 2 can be granted, asked 4',
    });
    const within = { ...ask, extendMs: 300_000, extraStatusRequests: 2 };
    expect(applied(requestExtension(observingRecord(), within, withPolicy)).record.localState).toBe('escalated');
  });

  it('D4: where no rule lets anyone extend, any request is refused', () => {
    const policy = deciders({ options: ['keep_bounds', 'close'] });
    const result = refusedWith(
      requestExtension(
        observingRecord(),
        { requestedBy: AGENT, reason: 'more please' },
        {
          ...ctx(T0 + 2_000),
          deciders: policy,
        },
      ),
    );
    expect(result).toEqual({
      code: 'ASYNCJOB_ERR_EXTENSION_BEYOND_GRANT',
      message:
        'no rule of the decider policy lets anyone extend at acme; a person may still decline or stop the job, so ask for nothing more',
    });
  });

  it('D4, G2: a flood joins the open escalation (each requester named once), and the 4th request within the hour is refused with when the next is taken', () => {
    const first = escalatedByAgent();
    const escalation = first.escalation!;
    const second = applied(
      requestExtension(first, extensionRequestSchema.parse({ ...ask, requestedBy: 'agent:helper' }), ctx(T0 + 60_000)),
    );
    expect(second.entries).toEqual([joinEntry(first, 'agent:helper', T0 + 60_000)]);
    expect(second.record.escalation).toEqual({ ...escalation, joinedBy: ['agent:helper'] });
    const third = applied(
      requestExtension(
        second.record,
        extensionRequestSchema.parse({ ...ask, requestedBy: ' AGENT:Research-Bot' }),
        ctx(T0 + 120_000),
      ),
    );
    // Asked before (in another spelling): journalled again, not added twice.
    expect(third.entries).toEqual([joinEntry(second.record, AGENT, T0 + 120_000)]);
    expect(third.record.escalation).toEqual({ ...escalation, joinedBy: ['agent:helper'] });
    expect(third.record.extensionRequestsAtMs).toEqual([T0 + 2_000, T0 + 60_000, T0 + 120_000]);
    const fourth = refusedWith(requestExtension(third.record, ask, ctx(T0 + 180_000)));
    expect(fourth).toEqual({
      code: 'ASYNCJOB_ERR_EXTENSION_RATE_LIMITED',
      message: `3 extension requests within 1h already (at most 3); the next is taken from ${new Date(T0 + 2_000 + 3_600_000).toISOString()}`,
    });
    const later = applied(requestExtension(third.record, ask, ctx(T0 + 2_000 + 3_600_000)));
    expect(later.record.extensionRequestsAtMs).toEqual([T0 + 60_000, T0 + 120_000, T0 + 3_602_000]);
  });

  it('D4, G2: an escalation keeps 20 joined requesters; a 21st is refused, never let in unrecorded to approve its own request', () => {
    let record = escalatedByAgent();
    const at = (n: number) => T0 + 2_000 + n * 21 * 60_000; // three an hour at most, as the default allows
    for (let n = 1; n <= 20; n++)
      record = applied(
        requestExtension(
          record,
          extensionRequestSchema.parse({ ...ask, requestedBy: `agent:helper-${n}` }),
          ctx(at(n)),
        ),
      ).record;
    expect(record.escalation?.joinedBy).toHaveLength(20);
    const late = extensionRequestSchema.parse({ ...ask, requestedBy: 'agent:helper-21' });
    expect(refusedWith(requestExtension(record, late, ctx(at(21))))).toEqual({
      code: 'ASYNCJOB_ERR_EXTENSION_RATE_LIMITED',
      message: '20 requesters have joined this escalation already (at most 20); ask again once it is answered',
    });
    // One already among them asks again: counted, nothing else changes.
    const again = extensionRequestSchema.parse({ ...ask, requestedBy: 'agent:helper-7' });
    expect(applied(requestExtension(record, again, ctx(at(21)))).record.escalation).toEqual(record.escalation);
  });

  it('D4: a join is journalled; a workflow whose history joined unjournalled replays with the record alone', () => {
    const escalated = escalatedByAgent();
    const helper = extensionRequestSchema.parse({ ...ask, requestedBy: 'agent:helper' });
    const journalled = applied(requestExtension(escalated, helper, ctx(T0 + 60_000)));
    expect(journalled.entries.map((e) => e.body)).toEqual([joinEntry(escalated, 'agent:helper', T0 + 60_000).body]);
    const asBefore = applied(requestExtension(escalated, helper, ctx(T0 + 60_000), false));
    expect(asBefore.entries).toEqual([]);
    expect(asBefore.record).toEqual({ ...journalled.record, journal: escalated.journal });
  });

  it("D4: the decider policy's extensionRequests replaces the default three an hour", () => {
    const policy = deciders({ options: ['extend'] }, { most: 1, withinMs: 600_000 });
    const first = applied(requestExtension(observingRecord(), ask, { ...ctx(T0 + 2_000), deciders: policy }));
    expect(refusedWith(requestExtension(first.record, ask, { ...ctx(T0 + 60_000), deciders: policy }))).toEqual({
      code: 'ASYNCJOB_ERR_EXTENSION_RATE_LIMITED',
      message: `1 extension request within 10m already (at most 1); the next is taken from ${new Date(T0 + 602_000).toISOString()}`,
    });
    const next = requestExtension(first.record, ask, { ...ctx(T0 + 602_000), deciders: policy });
    expect(isRefusal(next)).toBe(false);
  });
});
