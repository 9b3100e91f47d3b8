import { describe, expect, it } from 'vitest';
import { type AdapterCapabilities, OPTIONS_BY_REASON, decisionOptionSchema } from '../../src/core/escalation';
import { escalationReasonSchema } from '../../src/core/journal';
import { type OperationRecord } from '../../src/core/operation';
import { missingForOption, optionFacts, withReconciliationFacts } from '../../src/core/option-executability';
import { raiseEscalation } from '../../src/core/raise-escalation';
import { afterCreate, afterReconcile, applyDecision, nextCommand, type StepContext } from '../../src/core/step';
import { T0, newRecord, observingRecord, observed } from './helpers';

const ALL: AdapterCapabilities = { cancel: true, repeatableCollect: true, sameTokenResend: true };
const NONE: AdapterCapabilities = { cancel: false, repeatableCollect: false, sameTokenResend: false };
const who = { approvedBy: 'alice@example.com', reason: 'checked the provider console' };

function ctx(nowMs: number, over: Partial<StepContext> = {}): StepContext {
  return { nowMs, random: 0.5, actor: 'workflow', capabilities: NONE, reconciliation: 'none', ...over };
}

/** A tokenless POST create with `reconciliation: none` whose answer was lost: the outside user's case. */
function lostTokenlessCreate(capabilities: AdapterCapabilities = NONE): OperationRecord {
  const r = newRecord({ baseDelayMs: 100, maxDelayMs: 1_000 });
  const lost = observed({ action: 'create', transport: 'ambiguous', receivedAtMs: T0 + 100 });
  return afterCreate(r, lost, ctx(T0 + 100, { capabilities })).record;
}

describe('options that can act (E3)', () => {
  it.each(escalationReasonSchema.options)(
    'E3: %s never offers an option that misses a fact, over every mix of capabilities and records',
    (reason) => {
      const records = [observingRecord(), newRecord(), { ...observingRecord(), result: { validation: 'invalid' } }];
      for (const record of records as OperationRecord[])
        for (const capabilities of [ALL, NONE, { ...NONE, cancel: true }, { ...ALL, sameTokenResend: false }])
          for (const from of ['observing', 'create_unknown', 'create_pending'] as const) {
            const esc = raiseEscalation(record, reason, 'x', T0 + 1_000, capabilities, from);
            const facts = optionFacts(record, capabilities, from);
            expect(esc.options.length).toBeGreaterThan(0);
            for (const o of esc.options) expect(missingForOption(o.option, facts)).toEqual([]);
          }
    },
  );

  it('E3: each option names the facts it needs; close and inspect always act', () => {
    const empty = optionFacts(newRecord(), NONE, 'create_unknown');
    const needs = Object.fromEntries(decisionOptionSchema.options.map((o) => [o, missingForOption(o, empty)]));
    expect(needs).toEqual({
      extend: ['provider_job'],
      keep_bounds: ['provider_job'],
      cancel_at_provider: ['cancel_endpoint', 'provider_job'],
      retry_create_same_token: ['same_token_resend'],
      look_up_job: ['job_lookup'],
      retry_collect: ['repeatable_collect', 'result_location'],
      accept_result: ['result_on_record'],
      adopt_job: ['job_ids'],
      close: [],
      inspect_provider_console: [],
    });
    // Nothing can have been created (the create was refused or never sent): sending it again needs no token.
    expect(missingForOption('retry_create_same_token', optionFacts(newRecord(), NONE, 'create_pending'))).toEqual([]);
    const sent = {
      ...observingRecord(),
      cancel: { requestedBy: 'a', reason: 'r', expectedEffect: 'e', requestedAtMs: T0, sentAtMs: T0 },
    };
    expect(missingForOption('cancel_at_provider', optionFacts(sent, ALL, 'cancelling'))).toEqual(['cancel_not_sent']);
  });

  it('E3, U2: a tokenless create with no reconciliation method whose answer was lost offers no same-token re-send', () => {
    const r = lostTokenlessCreate();
    expect(r.escalation?.reason).toBe('create_unknown');
    expect(r.escalation?.options.map((o) => o.option)).toEqual(['close', 'inspect_provider_console']);
    // The same provider with an idempotency token may re-send, and does so without a lookup it does not have.
    const withToken = lostTokenlessCreate({ ...NONE, sameTokenResend: true });
    expect(withToken.escalation?.options.map((o) => o.option)).toContain('retry_create_same_token');
    const decided = applyDecision(
      withToken,
      { option: 'retry_create_same_token', ...who },
      ctx(T0 + 2_000, { capabilities: { ...NONE, sameTokenResend: true } }),
    );
    expect(decided.kind).toBe('step');
    if (decided.kind !== 'step') return;
    expect(decided.record).toMatchObject({ localState: 'reconciliation', reconcileBy: 'resend' });
    expect(nextCommand(decided.record, T0 + 2_000)).toEqual({ kind: 'reconcile', reservesCreateAttempt: true });
  });

  it('E3, A2: a decision naming an option that cannot act is refused before anything happens, naming what is missing', () => {
    // An escalation raised by code before E3 offered the re-send to a tokenless provider.
    const r = lostTokenlessCreate();
    const old = {
      ...r,
      escalation: {
        ...r.escalation!,
        options: [{ option: 'retry_create_same_token' as const, label: 're-send' }, ...r.escalation!.options],
      },
    };
    const refused = applyDecision(old, { option: 'retry_create_same_token', ...who }, ctx(T0 + 2_000));
    expect(refused).toMatchObject({ kind: 'refused', code: 'ASYNCJOB_ERR_OPTION_NOT_EXECUTABLE' });
    expect(refused.kind === 'refused' && refused.message).toMatch(/same_token_resend .*no idempotency token/);
    const cancel = applyDecision(old, { option: 'cancel_at_provider', ...who }, ctx(T0 + 2_000));
    expect(cancel.kind === 'refused' && cancel.message).toMatch(/cancel_endpoint .*no cancel call.*provider_job/);
  });

  it('E3: facts recorded before the re-send fact existed take it from the reconciliation method', () => {
    const old = { cancel: true, repeatableCollect: true };
    expect(withReconciliationFacts(old, 'same_token_resend').sameTokenResend).toBe(true);
    expect(withReconciliationFacts(old, 'none').sameTokenResend).toBe(false);
    expect(withReconciliationFacts({ ...NONE, sameTokenResend: true }, 'none').sameTokenResend).toBe(true);
  });

  it.each([
    ['lookup', true],
    ['list_by_client_reference', true],
    ['lookup_by_token', true],
    ['same_token_resend', false],
    ['none', false],
  ] as const)('E3, U2: reconciliation %s: the adapter can look a job up: %s', (reconciliation, lookup) => {
    expect(withReconciliationFacts(NONE, reconciliation).lookup).toBe(lookup);
    // Never declared apart from the method: a capability saying otherwise is overruled.
    expect(withReconciliationFacts({ ...NONE, lookup: !lookup }, reconciliation).lookup).toBe(lookup);
  });

  it('E3: every reason keeps close and inspect, so an escalation always has an option that acts', () => {
    for (const reason of escalationReasonSchema.options) {
      expect(OPTIONS_BY_REASON[reason]).toContain('close');
      expect(OPTIONS_BY_REASON[reason]).toContain('inspect_provider_console');
    }
  });
});

/** A tokenless create whose answer was lost, reconciled by `reconciliation`, the lookup refused (a 400 it does not declare absent). */
function lookupRefused(reconciliation: StepContext['reconciliation']): OperationRecord {
  const r = newRecord({ baseDelayMs: 100, maxDelayMs: 1_000 });
  const lost = observed({ action: 'create', transport: 'ambiguous', receivedAtMs: T0 + 100 });
  const reconciling = afterCreate(r, lost, ctx(T0 + 100, { reconciliation })).record;
  const refused = observed({
    action: 'reconcile',
    transport: 'response',
    httpStatus: 400,
    errorCategory: 'http_4xx',
    receivedAtMs: T0 + 200,
  });
  return afterReconcile(reconciling, refused, ctx(T0 + 200, { reconciliation })).record;
}

describe('looking the job up after a lost tokenless create (E3, U2)', () => {
  it('E3, U2: with a lookup declared, the escalation offers looking the job up, never a same-token re-send', () => {
    const r = lookupRefused('lookup');
    expect(r.escalation).toMatchObject({ reason: 'create_unknown', raisedFrom: 'reconciliation' });
    expect(r.escalation?.options.map((o) => o.option)).toEqual(['look_up_job', 'close', 'inspect_provider_console']);
    expect(r.escalation?.options[0]?.label).toBe(
      'look the job up at the provider (create is sent again only if it has none)',
    );
    expect(lookupRefused('list_by_client_reference').escalation?.options.map((o) => o.option)).toContain('look_up_job');
  });

  it('E3, U2, A1: the decision looks the job up in a new create window: reconciliation, never a blind re-send', () => {
    const r = lookupRefused('lookup');
    const decided = applyDecision(r, { option: 'look_up_job', ...who }, ctx(T0 + 2_000, { reconciliation: 'lookup' }));
    expect(decided.kind).toBe('step');
    if (decided.kind !== 'step') return;
    expect(decided.record).toMatchObject({ localState: 'reconciliation', reconcileBy: 'lookup' });
    expect(decided.record.deadlines.createDeadlineMs).toBe(T0 + 2_000 + r.policy.extensionMs);
    expect(nextCommand(decided.record, T0 + 2_000, 'lookup')).toEqual({
      kind: 'reconcile',
      reservesCreateAttempt: false,
    });
  });

  it('E3: without a list or a lookup, looking the job up is never offered, and a decision naming it is refused', () => {
    const r = lostTokenlessCreate();
    expect(r.escalation?.options.map((o) => o.option)).not.toContain('look_up_job');
    const refused = applyDecision(r, { option: 'look_up_job', ...who }, ctx(T0 + 2_000));
    expect(refused).toMatchObject({ kind: 'refused', code: 'ASYNCJOB_ERR_OPTION_NOT_EXECUTABLE' });
    expect(refused.kind === 'refused' && refused.message).toMatch(/job_lookup .*no list or lookup/);
  });
});
