import { describe, expect, it } from 'vitest';
import { requestFingerprint, startFingerprint } from '../../src/core/fingerprint';
import { operationRecordSchema, validateStartRequest } from '../../src/core/operation';
import { variableDeclarationsSchema } from '../../src/core/operation-variables';
import { nextCommand, operationSummary, type StepContext } from '../../src/core/step';
import { refuseVariables, settleVariables } from '../../src/core/step-variables';
import { transition } from '../../src/core/transitions';
import { T0, newRecord } from './helpers';

const ctx: StepContext = {
  nowMs: T0 + 10,
  random: 0.5,
  actor: 'workflow',
  capabilities: { cancel: false, repeatableCollect: false, sameTokenResend: false },
  reconciliation: 'none',
};

const declared = variableDeclarationsSchema.parse({
  scope: { pattern: 'subscriptions/[^/]+', reserved: true, required: true },
  region: { default: 'us-east-1' },
});

const start = {
  operationId: 'op-1',
  provider: 'acme',
  payload: { report: 'sales' },
  startedBy: 'svc:billing',
  authorisedBy: 'alice@example.com',
  createDeadline: { afterMs: 120_000 },
  resultDeadline: { afterMs: 3_600_000 },
};

describe('operation variables in the start request and its fingerprint (C5, I2)', () => {
  it('C5: the start request checks the variables grammar and names each bad one', () => {
    const checked = validateStartRequest({ ...start, variables: { scope: 'a\nb', jobId: 'x', ok: 'fine' } }, T0);
    expect(checked.kind).toBe('refused');
    if (checked.kind !== 'refused') return;
    expect(checked.issues.map((i) => i.path).sort()).toEqual(['variables.jobId', 'variables.scope']);
  });

  it('C5: variables that fit the grammar pass the start check, before any declaration is known', () => {
    expect(validateStartRequest({ ...start, variables: { anything: 'x/y' } }, T0).kind).toBe('ok');
  });

  it('I2: the variables are part of the fingerprint; none given keeps the payload fingerprint', () => {
    const payload = { report: 'sales' };
    expect(startFingerprint(payload)).toBe(requestFingerprint(payload));
    expect(startFingerprint(payload, {})).toBe(requestFingerprint(payload));
    const a = startFingerprint(payload, { region: 'eu-west-1' });
    expect(a).not.toBe(requestFingerprint(payload));
    expect(a).not.toBe(startFingerprint(payload, { region: 'us-east-1' }));
    expect(a).toBe(startFingerprint({ report: 'sales' }, { region: 'eu-west-1' }));
  });

  it('I2: a payload shaped like a payload with variables never shares their fingerprint', () => {
    const payload = { report: 'sales' };
    const variables = { region: 'eu' };
    expect(startFingerprint({ payload, variables } as Record<string, unknown>)).not.toBe(
      startFingerprint(payload, variables),
    );
  });

  it('C5: the record holds the given variables and is fingerprinted with them', () => {
    const record = newRecord({}, { variables: { scope: 'subscriptions/s1' } });
    expect(record.variables).toEqual({ scope: 'subscriptions/s1' });
    expect(record.requestFingerprint).toBe(
      startFingerprint({ report: 'sales', year: 2026 }, { scope: 'subscriptions/s1' }),
    );
    expect(newRecord().variables).toBeUndefined();
  });
});

describe('settling the variables against the adapter (C5)', () => {
  it('C5: values that fit take the defaults and stay on the record, which still parses', () => {
    const record = newRecord({}, { variables: { scope: 'subscriptions/s1' } });
    const settled = settleVariables(record, declared, record.variables);
    expect(settled.kind).toBe('ok');
    if (settled.kind !== 'ok') return;
    expect(settled.record.variables).toEqual({ scope: 'subscriptions/s1', region: 'us-east-1' });
    expect(operationRecordSchema.safeParse(settled.record).success).toBe(true);
  });

  it('C5: an adapter that declares none leaves a record without variables as it is', () => {
    const record = newRecord();
    expect(settleVariables(record, undefined, undefined)).toEqual({ kind: 'ok', record });
  });

  it('C5: a bad value ends the operation failed before anything is sent, the refusal and its issues recorded', () => {
    const record = newRecord({}, { variables: { scope: 'elsewhere/x', colour: 'red' } });
    const settled = settleVariables(record, declared, record.variables);
    expect(settled.kind).toBe('refused');
    if (settled.kind !== 'refused') return;
    const step = refuseVariables(record, settled.issues, ctx);
    expect(step.record.localState).toBe('failed');
    expect(step.record.refusal?.code).toBe('ASYNCJOB_ERR_INVALID_VARIABLE');
    expect(step.record.refusal?.issues.map((i) => i.path)).toEqual(['variables.colour', 'variables.scope']);
    expect(step.record.used.createAttempts).toBe(0);
    expect(step.entries).toHaveLength(1);
    expect(step.entries[0]!.body).toMatchObject({
      kind: 'transition',
      from: 'create_pending',
      to: 'failed',
      cause: 'variables_refused',
      reason: expect.stringMatching(/^ASYNCJOB_ERR_INVALID_VARIABLE: variables\.colour: not declared/),
    });
    expect(nextCommand(step.record, T0 + 20, 'none').kind).toBe('finished');
    expect(operationSummary(step.record).refusal?.code).toBe('ASYNCJOB_ERR_INVALID_VARIABLE');
    expect(operationRecordSchema.safeParse(step.record).success).toBe(true);
  });

  it('M1, C5: the refusal needs issues, and is refused once a create was reserved', () => {
    const record = newRecord();
    const noIssues = transition(record, { type: 'variables_refused', actor: 'workflow', issues: [] }, T0);
    expect(noIssues).toMatchObject({ kind: 'refused', missingEvidence: ['variable_issues'] });
    const reserved = { ...record, used: { ...record.used, createAttempts: 1 } };
    const issues = [{ path: 'variables.x', message: 'not declared' }];
    const late = transition(reserved, { type: 'variables_refused', actor: 'workflow', issues }, T0);
    expect(late).toMatchObject({ kind: 'refused', missingEvidence: ['variable_issues'] });
  });
});
