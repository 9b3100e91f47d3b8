import { describe, expect, it } from 'vitest';
import { OPTIONS_BY_REASON, renderEscalation, validateDecision, type OpenEscalation } from '../../src/core/escalation';
import { escalationReasonSchema } from '../../src/core/journal';
import { raiseEscalation } from '../../src/core/raise-escalation';
import { T0, observingRecord } from './helpers';

const record = () => {
  const r = observingRecord();
  return {
    ...r,
    operationId: 'report-export-2025-04-18-01',
    jobId: 'exp_71c',
    remote: {
      ...r.remote,
      jobIds: ['exp_71c'],
      lastHttp: { transport: 'response' as const, httpStatus: 200, atMs: Date.UTC(2026, 10, 29, 10, 58) },
    },
    used: { ...r.used, statusRequests: 12 },
    budgets: { ...r.budgets, maxStatusRequests: 12 },
  };
};
const NOW = T0 + 40 * 60_000;
const CAPS = { cancel: true, repeatableCollect: false };

describe('E1: each reason determines its bounded options', () => {
  it.each(escalationReasonSchema.options)('E1: %s offers only its own options, never a bare "continue"', (reason) => {
    const esc = raiseEscalation(record(), reason, 'test', NOW, CAPS);
    const offered = esc.options.map((o) => o.option);
    expect(offered.length).toBeGreaterThan(0);
    for (const option of offered) expect(OPTIONS_BY_REASON[reason]).toContain(option);
    expect(offered).not.toContain('retry_collect');
    for (const o of esc.options) expect(o.label.toLowerCase()).not.toContain('continue');
  });

  it('E2: "cancel at provider" only appears when the adapter supports cancel', () => {
    expect(raiseEscalation(record(), 'deadline_exceeded', 'x', NOW, CAPS).options.map((o) => o.option)).toContain(
      'cancel_at_provider',
    );
    expect(
      raiseEscalation(record(), 'deadline_exceeded', 'x', NOW, { cancel: false, repeatableCollect: false }).options.map(
        (o) => o.option,
      ),
    ).not.toContain('cancel_at_provider');
  });

  it('E1, H4: authorization_denied never offers a retry with the same credential', () => {
    expect(raiseEscalation(record(), 'authorization_denied', 'x', NOW, CAPS).options.map((o) => o.option)).toEqual([
      'close',
      'inspect_provider_console',
    ]);
  });

  it('E2: an extension is offered as bounded time and checks', () => {
    const extend = raiseEscalation(record(), 'request_budget_exhausted', 'x', NOW, CAPS).options.find(
      (o) => o.option === 'extend',
    );
    expect(extend).toMatchObject({
      extendMs: 15 * 60_000,
      extraStatusRequests: 4,
      label: 'extend by 15 min with 4 more checks',
    });
  });
});

describe('E2: the escalation message', () => {
  it("E2: renders the facts a human needs, in the seeds' format", () => {
    const text = renderEscalation(
      raiseEscalation(record(), 'request_budget_exhausted', 'all 12 status requests used', NOW, CAPS),
    );
    expect(text.split('\n').slice(0, 11)).toEqual([
      'External job needs a decision',
      'Operation: report-export-2025-04-18-01',
      'Provider: acme',
      'Provider job: exp_71c',
      'Trace: trace-1',
      'Last state: running',
      'Elapsed time: 40 minutes',
      'Status requests: 12 of 12',
      'Last HTTP result: 200 at 10:58 UTC',
      'Stopped because: request_budget_exhausted (all 12 status requests used)',
      'Safe options: extend by 15 min with 4 more checks, cancel at provider, close the operation (the provider job is left as it is), inspect provider console',
    ]);
    expect(text).not.toMatch(/continue\?/i);
    expect(text).not.toContain('AAECAwQFBgcICQoLDA0ODw');
  });
});

describe('A2: decisions are validated against the options offered', () => {
  const esc = (): OpenEscalation => raiseEscalation(record(), 'deadline_exceeded', 'x', NOW, CAPS);
  const who = { approvedBy: 'bob@example.com', reason: 'provider incident, report still needed' };
  it.each([
    [
      'A2: an extension within the offer is accepted',
      { option: 'extend', ...who, extendMs: 600_000, extraStatusRequests: 4 },
      'ok',
    ],
    ['A2: a cancel that was offered is accepted', { option: 'cancel_at_provider', ...who }, 'ok'],
    [
      'A2: a decision without who approved it is refused',
      { option: 'close', reason: 'x' },
      'ASYNCJOB_ERR_DECISION_INCOMPLETE',
    ],
    [
      'A2: a decision without why is refused',
      { option: 'close', approvedBy: 'bob', reason: '' },
      'ASYNCJOB_ERR_DECISION_INCOMPLETE',
    ],
    [
      'A2: an extension that names no new bounds is refused',
      { option: 'extend', ...who },
      'ASYNCJOB_ERR_DECISION_INCOMPLETE',
    ],
    [
      'A2: more time than offered is refused',
      { option: 'extend', ...who, extendMs: 900_001, extraStatusRequests: 1 },
      'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS',
    ],
    [
      'A2: more checks than offered are refused',
      { option: 'extend', ...who, extendMs: 1000, extraStatusRequests: 5 },
      'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS',
    ],
    [
      'A2: extension fields on another option are refused',
      { option: 'close', ...who, extendMs: 1000 },
      'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS',
    ],
    ['A2: an option not offered is refused', { option: 'accept_result', ...who }, 'ASYNCJOB_ERR_OPTION_NOT_OFFERED'],
    [
      'A2: an option outside the closed set is refused',
      { option: 'continue', ...who },
      'ASYNCJOB_ERR_DECISION_INCOMPLETE',
    ],
    [
      'A2: unknown fields are refused',
      { option: 'close', ...who, resetCounters: true },
      'ASYNCJOB_ERR_DECISION_INCOMPLETE',
    ],
  ])('%s', (_title, decision, expected) => {
    const result = validateDecision(esc(), decision, { nowMs: NOW + 1000 });
    if (expected === 'ok') expect(result.kind).toBe('ok');
    else expect(result).toMatchObject({ kind: 'refused', code: expected });
  });

  it('A2: an empty message (what the Web UI sends when its editor forgot the text) is refused as docs/operating.md shows', () => {
    expect(validateDecision(esc(), undefined, { nowMs: NOW + 1000 })).toEqual({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_DECISION_INCOMPLETE',
      message: '(decision): Invalid input: expected object, received undefined',
    });
  });

  it('A2: a decision after the decision deadline is refused', () => {
    const e = esc();
    expect(validateDecision(e, { option: 'close', ...who }, { nowMs: e.decisionDeadlineMs + 1 })).toMatchObject({
      code: 'ASYNCJOB_ERR_DECISION_TOO_LATE',
    });
  });

  it('A2, U3: adopt_job must name one of the conflicting jobs', () => {
    const r = { ...record(), remote: { ...record().remote, jobIds: ['job_a', 'job_b'] } };
    const e = raiseEscalation(r, 'job_id_conflict', 'same token, two jobs', NOW, CAPS);
    expect(validateDecision(e, { option: 'adopt_job', ...who, jobId: 'job_b' }, { nowMs: NOW }).kind).toBe('ok');
    expect(validateDecision(e, { option: 'adopt_job', ...who, jobId: 'job_c' }, { nowMs: NOW })).toMatchObject({
      code: 'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS',
    });
  });
});
