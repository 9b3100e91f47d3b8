/**
 * docs/operating.md says what an operator pastes into the Web UI. Every ```json block it marks `decision` must be
 * a decision the workflow accepts: valid for `decisionSchema`, and within the bounds of an escalation that offers
 * its option with the default policy. Blocks marked `refused` must be refused; blocks marked `cancel` must be
 * cancel requests.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  decisionSchema,
  OPTIONS_BY_REASON,
  validateDecision,
  type Decision,
  type DecisionOption,
} from '../../src/core/escalation';
import { escalationReasonSchema, type EscalationReason } from '../../src/core/journal';
import { raiseEscalation } from '../../src/core/raise-escalation';
import { deciderVerdict, keysOf } from '../../src/core/decider-policy';
import { deciderPolicyFrom } from '../../src/policy/decider-policy-file';
import { cancelRequestSchema } from '../../src/workflows/messages';
import { parse as parseYaml } from 'yaml';
import { T0, observingRecord } from '../core/helpers';

const DOC = path.join(__dirname, '..', '..', 'docs', 'operating.md');

/** The ```json blocks of the document whose info string is `json <kind>`, with their line numbers. */
function jsonBlocks(kind: string): { line: number; text: string }[] {
  const lines = readFileSync(DOC, 'utf8').split('\n');
  const out: { line: number; text: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```json ' + kind) continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
    expect(end, `block at line ${i + 1} is closed`).toBeGreaterThan(i);
    out.push({ line: i + 1, text: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return out;
}

/** An escalation, raised by the product's own code with the default policy, that offers `decision`'s option. */
function escalationOffering(decision: Decision) {
  const needs = (reason: EscalationReason): boolean =>
    (decision.extraRateLimited === undefined || reason === 'rate_limited') &&
    (decision.extraTransportFailures === undefined || reason === 'provider_failure');
  const reason = escalationReasonSchema.options.find((r) => OPTIONS_BY_REASON[r].includes(decision.option) && needs(r));
  expect(reason, `a reason offers ${decision.option}`).toBeDefined();
  const base = observingRecord();
  // The job IDs the document's adopt_job example chooses from (a U3 conflict reports two).
  // E3: a result that failed validation is on record, so accept_result can act.
  const record = {
    ...base,
    remote: { ...base.remote, jobIds: ['job_7ad2', 'job_7ad3'] },
    result: { validation: 'invalid' as const, problems: ['checksum mismatch'] },
  };
  return raiseEscalation(record, reason!, 'documented example', T0 + 60_000, {
    cancel: true,
    repeatableCollect: true,
    sameTokenResend: true,
    lookup: true,
  });
}

const decisions = jsonBlocks('decision');

describe('docs/operating.md: the decision JSON an operator pastes into the Web UI', () => {
  it('has an example for every option', () => {
    const options = decisions.map((b) => (JSON.parse(b.text) as { option: DecisionOption }).option);
    for (const option of [
      'extend',
      'keep_bounds',
      'close',
      'cancel_at_provider',
      'accept_result',
      'adopt_job',
      'retry_collect',
      'retry_create_same_token',
      'look_up_job',
      'inspect_provider_console',
    ]) {
      expect(options, option).toContain(option);
    }
  });

  it.each(decisions.map((b) => [b.line, b.text] as const))(
    'A2: the decision at line %i is accepted by decisionSchema and within the offered bounds',
    (_line, text) => {
      const parsed = decisionSchema.safeParse(JSON.parse(text));
      expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
      const decision = parsed.data!;
      expect(validateDecision(escalationOffering(decision), decision, { nowMs: T0 + 120_000 })).toEqual({
        kind: 'ok',
        decision,
      });
    },
  );

  it('A2: the refused example is refused for its bounds, as the document says', () => {
    const refused = jsonBlocks('refused');
    expect(refused).toHaveLength(1);
    const decision = decisionSchema.parse(JSON.parse(refused[0]!.text));
    expect(validateDecision(escalationOffering(decision), decision, { nowMs: T0 + 120_000 })).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS',
      message: 'extraStatusRequests: 5 exceeds the offered 4',
    });
  });

  it('X1: the cancel example is a cancel request', () => {
    const cancels = jsonBlocks('cancel');
    expect(cancels).toHaveLength(1);
    const parsed = cancelRequestSchema.safeParse(JSON.parse(cancels[0]!.text));
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  });
});

describe('docs/operating.md: who may decide', () => {
  it('D2, D3: the deciders section it shows is a valid policy that means what the text says', () => {
    const text = readFileSync(DOC, 'utf8');
    const section = text.slice(text.indexOf('\n### The `deciders` section of the policy file\n'));
    const yaml = /```yaml\n([\s\S]*?)\n```/.exec(section);
    expect(yaml, 'a yaml block in the section').not.toBeNull();
    const { policy } = deciderPolicyFrom(parseYaml(yaml![1]!), 'docs/operating.md');
    expect(keysOf(policy, 'Alice@Example.com')).toHaveLength(1);
    const asked = { provider: 'reports', reason: 'deadline_exceeded', decider: 'bob@example.com' } as const;
    expect(
      deciderVerdict(policy, { ...asked, option: 'extend', extendMs: 3_600_000, extraStatusRequests: 20 }),
    ).toEqual({ kind: 'allowed', rule: 'oncall-may-extend', signatureRequired: false });
    expect(deciderVerdict(policy, { ...asked, option: 'extend', extendMs: 7_200_000, extraStatusRequests: 4 })).toEqual(
      {
        kind: 'refused',
        code: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED',
        message: 'rule "oncall-may-extend" grants an extension of at most 3600000 ms (asked 7200000 ms)',
      },
    );
    expect(deciderVerdict(policy, { ...asked, option: 'cancel_at_provider' })).toMatchObject({ kind: 'refused' });
    expect(deciderVerdict(policy, { ...asked, decider: 'alice@example.com', option: 'cancel_at_provider' })).toEqual({
      kind: 'allowed',
      rule: 'alice-may-cancel',
      signatureRequired: true,
    });
  });
});
