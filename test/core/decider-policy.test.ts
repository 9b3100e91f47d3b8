/**
 * The decider policy (D2, D3, D4): who may choose which option on which provider's escalation for which reason,
 * within which limits; the first rule that allows is the one recorded, and a refusal names the rule that did not
 * allow it; which decisions must be signed; the most an extension request could be granted; the digest.
 */
import { describe, expect, it } from 'vitest';
import {
  type DeciderPolicy,
  type DecisionAsked,
  deciderPolicyDigest,
  deciderPolicySchema,
  deciderVerdict,
  grantableExtension,
  inForce,
  keysOf,
} from '../../src/core/decider-policy';
import { ONCALL_RULES } from './helpers';

const ALICE_KEY = `ed25519:${'a1'.repeat(32)}`;
const BOB_KEY = `ed25519:${'b2'.repeat(32)}`;

/** The policy of the design's example, given as an operator might spell it (then normalised by the schema). */
function examplePolicy(overrides: Partial<Record<keyof DeciderPolicy, unknown>> = {}): DeciderPolicy {
  return deciderPolicySchema.parse({
    deciders: [
      { identity: 'Alice@Example.com', keys: [ALICE_KEY] },
      { identity: 'bob@example.com ', keys: [BOB_KEY] },
    ],
    groups: { oncall: ['ALICE@example.com', 'bob@example.com'] },
    rules: ONCALL_RULES,
    signatures: { options: [] },
    extensionRequests: { most: 3, withinMs: 3_600_000 },
    ...overrides,
  });
}

function asked(partial: Partial<DecisionAsked>): DecisionAsked {
  return { provider: 'acme', reason: 'deadline_exceeded', option: 'close', decider: 'alice@example.com', ...partial };
}

describe('who may decide (D2)', () => {
  it('D2: the identities of a policy are canonical: a group member and a decider spelled otherwise are one', () => {
    const policy = examplePolicy();
    expect(policy.groups.oncall).toEqual(['alice@example.com', 'bob@example.com']);
    expect(policy.deciders.map((d) => d.identity)).toEqual(['alice@example.com', 'bob@example.com']);
    expect(deciderVerdict(policy, asked({ decider: 'bob@example.com' }))).toEqual({
      kind: 'allowed',
      rule: 'oncall-may-extend',
      signatureRequired: false,
    });
  });

  it.each([
    ['alice@example.com', 'close', 'oncall-may-extend'],
    ['alice@example.com', 'keep_bounds', 'oncall-may-extend'],
    ['alice@example.com', 'inspect_provider_console', 'oncall-may-extend'],
    ['alice@example.com', 'cancel_at_provider', 'alice-may-cancel'],
    ['bob@example.com', 'close', 'oncall-may-extend'],
  ] as const)('D2: %s may choose %s (rule %s)', (decider, option, rule) => {
    expect(deciderVerdict(examplePolicy(), asked({ decider, option }))).toMatchObject({ kind: 'allowed', rule });
  });

  it('D2: an option no rule gives the decider is refused, naming the rules that name them', () => {
    const verdict = deciderVerdict(
      examplePolicy(),
      asked({ decider: 'bob@example.com', option: 'cancel_at_provider' }),
    );
    expect(verdict).toEqual({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED',
      message:
        'no rule of the decider policy lets bob@example.com choose cancel_at_provider for deadline_exceeded at acme' +
        ' (rules naming them: "oncall-may-extend")',
    });
  });

  it('D2: a decider no rule names is refused, saying so', () => {
    const verdict = deciderVerdict(examplePolicy(), asked({ decider: 'mallory@example.com' }));
    expect(verdict).toMatchObject({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED',
      message: expect.stringContaining('(no rule names them)'),
    });
  });

  it('D2: an extension within the rule is allowed; beyond its largest extension or most checks it is refused naming the rule', () => {
    const policy = examplePolicy();
    const extend = (extendMs: number, extraStatusRequests: number) =>
      deciderVerdict(policy, asked({ option: 'extend', extendMs, extraStatusRequests }));
    expect(extend(3_600_000, 20)).toMatchObject({ kind: 'allowed', rule: 'oncall-may-extend' });
    expect(extend(3_600_001, 4)).toEqual({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED',
      message: 'rule "oncall-may-extend" grants an extension of at most 3600000 ms (asked 3600001 ms)',
    });
    expect(extend(600_000, 21)).toEqual({
      kind: 'refused',
      code: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED',
      message: 'rule "oncall-may-extend" grants at most 20 extra checks (asked 21)',
    });
  });

  it('D2: providers and reasons limit a rule; "*" covers every one', () => {
    const policy = examplePolicy({
      rules: [
        {
          name: 'billing-deadlines',
          who: ['carol@example.com'],
          providers: ['billing'],
          reasons: ['deadline_exceeded', 'extension_requested'],
          options: ['close'],
        },
        { name: 'any', who: ['dave@example.com'], providers: ['*'], reasons: ['*'], options: ['close'] },
      ],
    });
    const carol = (provider: string, reason: DecisionAsked['reason']) =>
      deciderVerdict(policy, asked({ decider: 'carol@example.com', provider, reason })).kind;
    expect(carol('billing', 'deadline_exceeded')).toBe('allowed');
    expect(carol('billing', 'extension_requested')).toBe('allowed');
    expect(carol('acme', 'deadline_exceeded')).toBe('refused');
    expect(carol('billing', 'rate_limited')).toBe('refused');
    for (const provider of ['acme', 'billing'])
      for (const reason of ['rate_limited', 'provider_failure'] as const)
        expect(deciderVerdict(policy, asked({ decider: 'dave@example.com', provider, reason })).kind).toBe('allowed');
  });

  it('D2: rules are tried in order: the first that allows is recorded; one whose limit is broken gives way to a later one', () => {
    const policy = examplePolicy({
      rules: [
        {
          name: 'oncall-short',
          who: ['group:oncall'],
          providers: ['*'],
          reasons: ['*'],
          options: ['extend', 'close'],
          largestExtensionMs: 1_800_000,
        },
        { name: 'alice-long', who: ['alice@example.com'], providers: ['*'], reasons: ['*'], options: ['extend'] },
        { name: 'everyone-closes', who: ['group:oncall'], providers: ['*'], reasons: ['*'], options: ['close'] },
      ],
    });
    expect(deciderVerdict(policy, asked({ option: 'close' }))).toMatchObject({ rule: 'oncall-short' });
    const long = { option: 'extend' as const, extendMs: 3_600_000, extraStatusRequests: 4 };
    expect(deciderVerdict(policy, asked(long))).toMatchObject({ kind: 'allowed', rule: 'alice-long' });
    expect(deciderVerdict(policy, asked({ ...long, decider: 'bob@example.com' }))).toMatchObject({
      kind: 'refused',
      message: expect.stringContaining('rule "oncall-short" grants an extension of at most 1800000 ms'),
    });
  });

  it('D2: a rule naming a group the policy does not hold names no one (not even a group called "constructor")', () => {
    const policy = examplePolicy({
      rules: [{ name: 'ghosts', who: ['group:constructor'], providers: ['*'], reasons: ['*'], options: ['close'] }],
    });
    expect(deciderVerdict(policy, asked({})).kind).toBe('refused');
  });

  it('D2: the policy judges an agent as anyone else; that agents only decline is checked with every decision (G2)', () => {
    const policy = examplePolicy({
      rules: [{ name: 'bots', who: ['agent:helper'], providers: ['*'], reasons: ['*'], options: ['keep_bounds'] }],
    });
    expect(deciderVerdict(policy, asked({ decider: 'agent:helper', option: 'keep_bounds' })).kind).toBe('allowed');
  });
});

describe('which decisions must be signed (D3)', () => {
  it('D3: a rule marked signed requires a signature for every decision it allows', () => {
    expect(deciderVerdict(examplePolicy(), asked({ option: 'cancel_at_provider' }))).toEqual({
      kind: 'allowed',
      rule: 'alice-may-cancel',
      signatureRequired: true,
    });
    expect(deciderVerdict(examplePolicy(), asked({ option: 'close' }))).toMatchObject({ signatureRequired: false });
  });

  it('D3: the policy requires a signature for its options, whatever the rule', () => {
    const policy = examplePolicy({ signatures: { options: ['close'] } });
    expect(deciderVerdict(policy, asked({ option: 'close' }))).toMatchObject({
      kind: 'allowed',
      rule: 'oncall-may-extend',
      signatureRequired: true,
    });
    expect(deciderVerdict(policy, asked({ option: 'keep_bounds' }))).toMatchObject({ signatureRequired: false });
  });

  it('D3: the policy requires a signature for an extension longer than extensionsOverMs, not for one as long', () => {
    const policy = examplePolicy({ signatures: { options: [], extensionsOverMs: 900_000 } });
    const extend = (extendMs: number) =>
      deciderVerdict(policy, asked({ option: 'extend', extendMs, extraStatusRequests: 4 }));
    expect(extend(900_000)).toMatchObject({ kind: 'allowed', signatureRequired: false });
    expect(extend(900_001)).toMatchObject({ kind: 'allowed', signatureRequired: true });
  });
});

describe('the most an extension request could be granted (D4)', () => {
  it('D4: the largest limit of the rules that let someone extend for an extension request at the provider', () => {
    const policy = examplePolicy({
      rules: [
        {
          name: 'short',
          who: ['bob@example.com'],
          providers: ['*'],
          reasons: ['*'],
          options: ['extend'],
          largestExtensionMs: 600_000,
          mostExtraChecks: 10,
        },
        {
          name: 'long',
          who: ['alice@example.com'],
          providers: ['acme'],
          reasons: ['extension_requested'],
          options: ['extend'],
          largestExtensionMs: 1_800_000,
          mostExtraChecks: 2,
        },
        {
          name: 'not-for-requests',
          who: ['carol@example.com'],
          providers: ['*'],
          reasons: ['deadline_exceeded'],
          options: ['extend'],
          largestExtensionMs: 86_400_000,
        },
      ],
    });
    expect(grantableExtension(policy, 'acme')).toEqual({ anyone: true, extendMs: 1_800_000, extraStatusRequests: 10 });
    expect(grantableExtension(policy, 'billing')).toEqual({ anyone: true, extendMs: 600_000, extraStatusRequests: 10 });
  });

  it('D4: a rule without a limit leaves that bound to the escalation; no rule that extends means no one can', () => {
    expect(grantableExtension(examplePolicy(), 'acme')).toEqual({
      anyone: true,
      extendMs: 3_600_000,
      extraStatusRequests: 20,
    });
    const unlimited = examplePolicy({
      rules: [{ name: 'free', who: ['alice@example.com'], providers: ['*'], reasons: ['*'], options: ['extend'] }],
    });
    expect(grantableExtension(unlimited, 'acme')).toEqual({ anyone: true });
    const closeOnly = examplePolicy({
      rules: [{ name: 'close', who: ['alice@example.com'], providers: ['*'], reasons: ['*'], options: ['close'] }],
    });
    expect(grantableExtension(closeOnly, 'acme')).toEqual({ anyone: false });
  });
});

describe('keys and digest (D3, D5)', () => {
  it("D3: a decider's keys are found in any spelling of the decider, and no one else's", () => {
    const policy = examplePolicy();
    expect(keysOf(policy, 'ALICE@example.com ')).toEqual([ALICE_KEY]);
    expect(keysOf(policy, 'bob@example.com')).toEqual([BOB_KEY]);
    expect(keysOf(policy, 'carol@example.com')).toEqual([]);
  });

  it('D5: the digest does not depend on the order of keys in the objects, and changes with any rule', () => {
    const policy = examplePolicy();
    const reordered = JSON.parse(
      JSON.stringify(policy, (_key, value: unknown) =>
        value !== null && typeof value === 'object' && !Array.isArray(value)
          ? Object.fromEntries(Object.entries(value as Record<string, unknown>).reverse())
          : value,
      ),
    ) as DeciderPolicy;
    expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(policy));
    expect(deciderPolicyDigest(reordered)).toBe(deciderPolicyDigest(policy));
    expect(inForce(policy)).toEqual({ digest: deciderPolicyDigest(policy), policy });
    expect(inForce(policy).digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const changed = { ...policy, rules: [{ ...policy.rules[0]!, mostExtraChecks: 21 }, policy.rules[1]!] };
    expect(deciderPolicyDigest(changed)).not.toBe(deciderPolicyDigest(policy));
    const swapped = { ...policy, rules: [policy.rules[1]!, policy.rules[0]!] };
    expect(deciderPolicyDigest(swapped)).not.toBe(deciderPolicyDigest(policy));
  });
});
