/**
 * The one decision check (A2, G2, D1-D5) and how its verdict is journalled: signed decisions verify with the
 * decider's key over this very decision on this escalation while it is open, and anything else is refused and
 * recorded with its route, its signature and the policy's digest; the policy says who may decide and what must be
 * signed, with the exact command to sign it; agents only decline; no one approves what they asked for.
 */
import { describe, expect, it } from 'vitest';
import { type DeciderPolicyInForce, deciderPolicySchema, inForce } from '../../src/core/decider-policy';
import { type DecisionTransport, checkDecision, decisionBounds, decisionRoute } from '../../src/core/decision-check';
import { signedDecideCommand } from '../../src/core/decide-command';
import { REQUESTER_WITHDRAWS } from '../../src/core/decider-policy';
import { type DecisionSignature, keyIdOf, signDecision } from '../../src/core/decision-signature';
import { decisionSchema } from '../../src/core/escalation';
import { type OperationRecord } from '../../src/core/operation';
import {
  type StepContext,
  type StepRefusal,
  type StepResult,
  applyDecision,
  isRefusal,
  recordRejectedDecision,
  requestExtension,
} from '../../src/core/step';
import { ONCALL_RULES, T0, observingRecord } from './helpers';

const ALICE = 'alice@example.com';
const ALICE_SECRET = '11'.repeat(32);
const BOB_SECRET = '22'.repeat(32);
const MALLORY_SECRET = '33'.repeat(32);
const AGENT = 'agent:research-bot';
const RAISED = T0 + 2_000;
const NOW = T0 + 60_000;

/** Alice and Bob are on call; Alice may cancel, signed; an extension over 10 minutes must be signed. */
const DECIDERS: DeciderPolicyInForce = inForce(
  deciderPolicySchema.parse({
    deciders: [
      { identity: ALICE, keys: [keyIdOf(ALICE_SECRET)] },
      { identity: 'bob@example.com', keys: [keyIdOf(BOB_SECRET)] },
    ],
    groups: { oncall: [ALICE, 'bob@example.com', 'Alice Smith'] },
    rules: ONCALL_RULES,
    signatures: { options: [], extensionsOverMs: 600_000 },
    extensionRequests: { most: 3, withinMs: 3_600_000 },
  }),
);

function ctx(nowMs: number, deciders: DeciderPolicyInForce | null = DECIDERS): StepContext {
  return {
    nowMs,
    random: 0.5,
    actor: 'workflow',
    capabilities: { cancel: true, repeatableCollect: true },
    reconciliation: 'same_token_resend',
    ...(deciders !== null ? { deciders } : {}),
  };
}

function applied(result: StepResult | StepRefusal): StepResult {
  if (isRefusal(result)) throw new Error(`refused: ${result.code} ${result.message}`);
  return result;
}

/** An operation escalated by an extension request (offering 15 min and 4 checks), raised at `atMs`. */
function escalated(requestedBy = AGENT, atMs = RAISED, record = observingRecord()): OperationRecord {
  const ask = { requestedBy, reason: 'the report covers three years', extendMs: 600_000, extraStatusRequests: 4 };
  return applied(requestExtension(record, ask, ctx(atMs))).record;
}

type DecisionInput = Record<string, unknown> & { option: string; approvedBy: string; reason: string };

const extend15: DecisionInput = {
  option: 'extend',
  approvedBy: ALICE,
  reason: 'the long report is expected',
  extendMs: 900_000,
  extraStatusRequests: 4,
};

/** The decision signed with `secret` for the escalation of `record` (or `escalationId`), at `signedAtMs`. */
function signed(
  record: OperationRecord,
  input: DecisionInput,
  { secret = ALICE_SECRET, signedAtMs = RAISED + 30_000, escalationId = record.escalation!.id! } = {},
): DecisionInput & { signature: DecisionSignature } {
  const decision = decisionSchema.parse(input);
  const signature = signDecision(secret, {
    operationId: record.operationId,
    escalationId,
    option: decision.option,
    bounds: decisionBounds(decision),
    decider: decision.approvedBy,
    reason: decision.reason,
    signedAt: new Date(signedAtMs).toISOString(),
  });
  return { ...input, signature };
}

function check(
  record: OperationRecord,
  input: unknown,
  transport: DecisionTransport = 'update',
  deciders: DeciderPolicyInForce | null = DECIDERS,
  nowMs = NOW,
) {
  return checkDecision(record.escalation!, input, {
    nowMs,
    operationId: record.operationId,
    provider: record.provider,
    transport,
    ...(deciders !== null ? { deciders } : {}),
  });
}

function decisionEntry(step: StepResult) {
  const entry = step.entries.find((e) => e.body.kind === 'decision');
  if (entry === undefined) throw new Error('no decision entry');
  return entry.body;
}

describe('signed decisions (D3, D5)', () => {
  it('D3, D5: a signed decision is accepted with its proof: the route, the policy digest and rule, the signature', () => {
    const record = escalated();
    const input = signed(record, extend15);
    expect(check(record, input)).toEqual({
      kind: 'ok',
      decision: decisionSchema.parse(input),
      proof: {
        route: 'api',
        policy: { digest: DECIDERS.digest, rule: 'oncall-may-extend' },
        signature: input.signature,
      },
    });
    const step = applied(applyDecision(record, input, ctx(NOW)));
    expect(step.record.localState).toBe('observing');
    expect(decisionEntry(step)).toMatchObject({
      kind: 'decision',
      decision: 'extend',
      approvedBy: ALICE,
      accepted: true,
      bounds: { extendMs: 900_000, extraStatusRequests: 4 },
      escalation: record.escalation!.id,
      route: 'api',
      policy: { digest: DECIDERS.digest, rule: 'oncall-may-extend' },
      signature: input.signature,
    });
  });

  it('D3: a signature over other bounds, another reason or another decider is refused as invalid', () => {
    const record = escalated();
    const original = signed(record, { ...extend15, extendMs: 600_000 });
    for (const tampered of [
      { ...original, extendMs: 900_000 },
      { ...original, extraStatusRequests: 3 },
      { ...original, reason: 'something else' },
      { ...original, approvedBy: 'bob@example.com' },
    ])
      expect(check(record, tampered)).toMatchObject({ kind: 'refused', code: 'ASYNCJOB_ERR_SIGNATURE_INVALID' });
    expect(check(record, { ...original, extendMs: 900_000 })).toMatchObject({
      message: 'the signature does not match this decision (a changed field or another escalation)',
    });
    expect(check(record, { ...original, approvedBy: 'bob@example.com' })).toMatchObject({
      message: expect.stringContaining("is not one of bob@example.com's keys"),
    });
  });

  it('D3: a signature made for one escalation is refused on the next one of the same operation (replay)', () => {
    const first = escalated();
    const decline = signed(first, { option: 'keep_bounds', approvedBy: ALICE, reason: 'the budget stands' });
    const declined = applied(applyDecision(first, decline, ctx(RAISED + 60_000))).record;
    const second = escalated('agent:other-bot', RAISED + 120_000, declined);
    expect(second.escalation!.id).not.toBe(first.escalation!.id);
    expect(check(second, decline, 'signal', DECIDERS, RAISED + 180_000)).toEqual({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_SIGNATURE_INVALID',
      message: 'the signature does not match this decision (a changed field or another escalation)',
    });
  });

  it("D3: a key that is not the decider's (unknown, or another decider's) is refused", () => {
    const record = escalated();
    expect(check(record, signed(record, extend15, { secret: MALLORY_SECRET }))).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_SIGNATURE_INVALID',
      message: expect.stringContaining(`is not one of ${ALICE}'s keys in the decider policy`),
    });
    expect(check(record, signed(record, extend15, { secret: BOB_SECRET }))).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_SIGNATURE_INVALID',
    });
    const bobsValueUnderAlicesKey = signed(record, extend15, { secret: BOB_SECRET });
    const forged = {
      ...bobsValueUnderAlicesKey,
      signature: { ...bobsValueUnderAlicesKey.signature, keyId: keyIdOf(ALICE_SECRET) },
    };
    expect(check(record, forged)).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_SIGNATURE_INVALID',
      message: 'the signature does not match this decision (a changed field or another escalation)',
    });
    const carol = signed(record, { ...extend15, approvedBy: 'carol@example.com' }, { secret: MALLORY_SECRET });
    expect(check(record, carol)).toMatchObject({
      code: 'ASYNCJOB_ERR_SIGNATURE_INVALID',
      message: 'the decider policy holds no key for carol@example.com',
    });
  });

  it("D3: a signature dated before the escalation was raised or in the future is refused; within the clock's skew it is not", () => {
    const record = escalated();
    const early = signed(record, extend15, { signedAtMs: RAISED - 6 * 60_000 });
    expect(check(record, early)).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_SIGNATURE_INVALID',
      message: expect.stringContaining('before this escalation was raised'),
    });
    const future = signed(record, extend15, { signedAtMs: NOW + 6 * 60_000 });
    expect(check(record, future)).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_SIGNATURE_INVALID',
      message: expect.stringContaining('in the future'),
    });
    expect(check(record, signed(record, extend15, { signedAtMs: RAISED - 4 * 60_000 })).kind).toBe('ok');
    expect(check(record, signed(record, extend15, { signedAtMs: NOW + 4 * 60_000 })).kind).toBe('ok');
  });

  it('D3: a signature is refused when no decider policy is in force (no key to check it with)', () => {
    const record = escalated();
    expect(check(record, signed(record, extend15), 'update', null)).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_SIGNATURE_INVALID',
      message: expect.stringContaining('no decider policy is in force'),
    });
  });

  it('D3, D5: a refused signature is journalled with the route, the signature and the policy digest', () => {
    const record = escalated();
    const tampered = { ...signed(record, { ...extend15, extendMs: 600_000 }), extendMs: 900_000 };
    const refusal = applyDecision(record, tampered, ctx(NOW), 'signal');
    if (!isRefusal(refusal)) throw new Error('expected a refusal');
    expect(refusal.code).toBe('ASYNCJOB_ERR_SIGNATURE_INVALID');
    const step = recordRejectedDecision(record, tampered, refusal, ctx(NOW), 'signal');
    expect(step.record.localState).toBe('escalated');
    expect(decisionEntry(step)).toEqual({
      kind: 'decision',
      decision: 'extend',
      approvedBy: ALICE,
      reason: 'the long report is expected',
      accepted: false,
      rejectionReason: `ASYNCJOB_ERR_SIGNATURE_INVALID: ${refusal.message}`,
      escalation: record.escalation!.id,
      route: 'web-ui',
      signature: tampered.signature,
      policy: { digest: DECIDERS.digest },
    });
  });

  it('D1, D5: a refused decision by an identity that is not one is journalled as typed, marked so', () => {
    const record = escalated();
    const input = { ...extend15, approvedBy: 'alice\u200b@example.com', route: 'cli' };
    const refusal = applyDecision(record, input, ctx(NOW), 'update');
    if (!isRefusal(refusal)) throw new Error('expected a refusal');
    expect(refusal.code).toBe('ASYNCJOB_ERR_DECISION_INCOMPLETE');
    const entry = decisionEntry(recordRejectedDecision(record, input, refusal, ctx(NOW), 'update'));
    expect(entry).toMatchObject({
      approvedBy: '"alice\\u{200B}@example.com" (not an identity)',
      accepted: false,
      route: 'cli',
      policy: { digest: DECIDERS.digest },
    });
  });
});

describe('signatures the policy requires (D2, D3)', () => {
  it('D3: an unsigned extension over the policy length is refused with the exact signed command to run', () => {
    const record = escalated();
    const result = check(record, { ...extend15, approvedBy: ' Alice@Example.COM' }, 'signal');
    expect(result).toEqual({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_SIGNATURE_REQUIRED',
      message:
        'the decider policy (rule "oncall-may-extend") requires this decision to be signed; run instead: ' +
        'asyncjob decide op-1 --option extend --extend 15m --checks 4 --by alice@example.com ' +
        '--reason "the long report is expected" --sign',
    });
  });

  it('D3: the signed command quotes what the shell would split or read: a spaced name, quotes and dollars', () => {
    const record = escalated();
    const result = check(record, {
      ...extend15,
      approvedBy: 'Alice Smith',
      reason: 'say "yes" for $5 `now`',
    });
    expect(result).toMatchObject({ code: 'ASYNCJOB_ERR_SIGNATURE_REQUIRED' });
    expect(result.kind === 'refused' && result.message).toContain(
      '--by "alice smith" --reason "say \\"yes\\" for \\$5 \\`now\\`" --sign',
    );
    const decision = decisionSchema.parse({ ...extend15, approvedBy: "o'brien@example.com" });
    expect(signedDecideCommand('op-1', decision)).toContain(`--by "o'brien@example.com" --reason`);
  });

  it('D3: a rule marked signed refuses an unsigned decision; the same decision signed is accepted', () => {
    const record = escalated();
    const cancel = { option: 'cancel_at_provider', approvedBy: ALICE, reason: 'runaway job' };
    expect(check(record, cancel)).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_SIGNATURE_REQUIRED',
      message: expect.stringContaining(
        'asyncjob decide op-1 --option cancel_at_provider --by alice@example.com --reason "runaway job" --sign',
      ),
    });
    expect(check(record, signed(record, cancel))).toMatchObject({
      kind: 'ok',
      proof: { policy: { rule: 'alice-may-cancel' } },
    });
  });

  it('D2, D3: an unsigned decision the policy does not require signed is accepted with the rule and no signature', () => {
    const record = escalated();
    const short = { ...extend15, extendMs: 600_000 };
    expect(check(record, short)).toEqual({
      kind: 'ok',
      decision: decisionSchema.parse(short),
      proof: { route: 'api', policy: { digest: DECIDERS.digest, rule: 'oncall-may-extend' } },
    });
  });

  it('D2: a decider the policy does not name is refused, and the refusal names no rule that allowed it', () => {
    const record = escalated();
    expect(check(record, { ...extend15, extendMs: 600_000, approvedBy: 'carol@example.com' })).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED',
      message: expect.stringContaining('(no rule names them)'),
    });
    expect(
      check(record, { option: 'cancel_at_provider', approvedBy: 'bob@example.com', reason: 'stop it' }),
    ).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED',
      message: expect.stringContaining('(rules naming them: "oncall-may-extend")'),
    });
  });

  it('A2, D2: the offer bounds a decision before the policy: beyond the offer is out of bounds whatever the rule allows', () => {
    const record = escalated();
    expect(check(record, { ...extend15, extendMs: 1_800_000 })).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS',
    });
  });
});

describe('agents ask, people grant; no one approves their own request (G2, D1)', () => {
  it.each(['extend', 'close', 'cancel_at_provider', 'inspect_provider_console'])(
    'G2, D1: an agent never grants: %s by an agent, in any spelling, is refused',
    (option) => {
      const record = escalated('carol@example.com');
      const bounds = option === 'extend' ? { extendMs: 600_000, extraStatusRequests: 4 } : {};
      for (const approvedBy of ['agent:helper', 'AGENT:Helper ', 'ａｇｅｎｔ:helper'])
        for (const deciders of [DECIDERS, null])
          expect(check(record, { option, approvedBy, reason: 'go on', ...bounds }, 'update', deciders)).toMatchObject({
            kind: 'refused',
            code: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED',
            message: expect.stringContaining('agents ask and people grant'),
          });
    },
  );

  it('G2, D1: an agent approving its own request, in any spelling, is a self-approval', () => {
    const record = escalated(AGENT);
    for (const approvedBy of [AGENT, 'Agent:Research-Bot ', 'agent:research-bot\u00A0'])
      expect(check(record, { ...extend15, extendMs: 600_000, approvedBy })).toMatchObject({
        kind: 'refused',
        code: 'ASYNCJOB_ERR_SELF_APPROVAL',
      });
  });

  it('G2: an agent may decline (keep_bounds) where no policy is in force', () => {
    const record = escalated();
    const decline = { option: 'keep_bounds', approvedBy: AGENT, reason: 'no longer needed' };
    expect(check(record, decline, 'update', null)).toMatchObject({ kind: 'ok', proof: { route: 'api' } });
  });

  it('G2, D1: the requester cannot approve their own request in any spelling, by any route', () => {
    const record = escalated('carol@example.com');
    for (const approvedBy of [
      'carol@example.com',
      'Carol@Example.com',
      ' CAROL@example.com\u00A0',
      'ｃａｒｏｌ@example.com',
    ])
      for (const transport of ['signal', 'update'] as const)
        for (const deciders of [DECIDERS, null])
          expect(check(record, { ...extend15, extendMs: 600_000, approvedBy }, transport, deciders)).toMatchObject({
            kind: 'refused',
            code: 'ASYNCJOB_ERR_SELF_APPROVAL',
          });
  });

  it('G2, D4: a requester who joined the open escalation cannot approve it either; they may withdraw it', () => {
    const record = escalated('carol@example.com');
    const joined = applied(
      requestExtension(record, { requestedBy: ALICE, reason: 'me too', extendMs: 600_000 }, ctx(RAISED + 10_000)),
    ).record;
    expect(joined.escalation!.joinedBy).toEqual([ALICE]);
    const grant = { ...extend15, extendMs: 600_000, approvedBy: 'ALICE@example.com' };
    expect(check(joined, grant)).toMatchObject({ kind: 'refused', code: 'ASYNCJOB_ERR_SELF_APPROVAL' });
    expect(check(joined, { ...grant, approvedBy: 'bob@example.com' }).kind).toBe('ok');
    expect(check(joined, { option: 'keep_bounds', approvedBy: ALICE, reason: 'withdrawn' }).kind).toBe('ok');
  });

  it('G2, D2: under a policy, the requester withdraws their own request (keep_bounds) without a rule; no one else does', () => {
    const record = escalated(AGENT);
    const withdraw = { option: 'keep_bounds', approvedBy: 'Agent:Research-Bot', reason: 'found another way' };
    expect(check(record, withdraw, 'update', DECIDERS)).toMatchObject({
      kind: 'ok',
      proof: { policy: { digest: DECIDERS.digest, rule: REQUESTER_WITHDRAWS } },
    });
    const joined = applied(
      requestExtension(record, { requestedBy: 'agent:other-bot', reason: 'me too' }, ctx(RAISED + 10_000)),
    ).record;
    const byJoiner = { ...withdraw, approvedBy: 'agent:other-bot' };
    expect(check(joined, byJoiner, 'update', DECIDERS)).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED',
    });
  });
});

describe('routes (D5)', () => {
  it.each([
    ['signal', 'nothing', 'web-ui'],
    ['update', 'nothing', 'api'],
    ['signal', 'cli', 'web-ui'],
    ['update', 'cli', 'cli'],
    ['signal', 'mcp', 'web-ui'],
    ['update', 'mcp', 'mcp'],
    ['update', 'api', 'api'],
  ] as const)('D5: a decision by %s declaring %s is recorded as from %s', (transport, declared, route) => {
    const record = escalated();
    const input = { ...extend15, extendMs: 600_000, ...(declared !== 'nothing' ? { route: declared } : {}) };
    expect(check(record, input, transport)).toMatchObject({ kind: 'ok', proof: { route } });
    expect(decisionEntry(applied(applyDecision(record, input, ctx(NOW), transport)))).toMatchObject({ route });
  });

  it('D5: the route is told by the transport: a signal is the Web UI form whatever it declares, and an update cannot declare itself from the Web UI', () => {
    const record = escalated();
    expect(check(record, { ...extend15, extendMs: 600_000, route: 'web-ui' }, 'update')).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_DECISION_INCOMPLETE',
    });
    expect(decisionRoute({ route: 'web-ui' }, 'update')).toBe('api');
    expect(decisionRoute({ route: 'something' }, 'signal')).toBe('web-ui');
    expect(decisionRoute({ route: 'cli' }, 'signal')).toBe('web-ui');
  });
});
