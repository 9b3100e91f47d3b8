import { describe, expect, it } from 'vitest';
import { type OperationRecord } from '../../src/core/operation';
import {
  applyDecision,
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
const ask = { requestedBy: AGENT, reason: 'the report covers three years', extendMs: 600_000, extraStatusRequests: 20 };

function applied(result: StepResult | StepRefusal): StepResult {
  if (isRefusal(result)) throw new Error(`refused: ${result.code} ${result.message}`);
  return result;
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
    expect(joined.entries).toEqual([]);
    expect(joined.record).toBe(escalated);
    const before = requestExtension(newRecord(), ask, ctx(T0 + 100));
    expect(isRefusal(before) && before.code).toBe('ASYNCJOB_ERR_EXTENSION_NOT_APPLICABLE');
    const final = requestExtension({ ...observingRecord(), localState: 'succeeded' }, ask, ctx(T0 + 100));
    expect(isRefusal(final) && final.code).toBe('ASYNCJOB_ERR_OPERATION_FINAL');
  });
});
