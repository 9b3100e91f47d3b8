/**
 * The `deciders` section of the operator's policy file (D2, D3, D4): the form the documentation shows loads into
 * the normalised policy the workflow checks, a bad section is refused with every problem named at once, and one
 * file holds both the agents' policy (`asyncjob mcp`) and the deciders' (the worker).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { deciderPolicyDigest, deciderVerdict } from '../../src/core/decider-policy';
import { keyIdOf } from '../../src/core/decision-signature';
import { loadAgentPolicy } from '../../src/mcp/policy';
import { deciderPolicyFrom, loadDeciderPolicy } from '../../src/policy/decider-policy-file';
import { PolicyFileError } from '../../src/policy/policy-file';
import { ONCALL_RULES } from '../core/helpers';

const ALICE_KEY = keyIdOf('11'.repeat(32));

/** The `deciders` section as the design and docs/operating.md write it. */
const DECIDERS_YAML = `deciders:
  keys:                                  # deciders who sign: identity -> public keys
    alice@example.com: [${ALICE_KEY}]
  groups:
    oncall: [alice@example.com, Bob@Example.com]
  rules:                                 # tried in order; the first that allows is recorded
    - name: oncall-may-extend
      who: [group:oncall]
      providers: ['*']                   # default ['*']
      reasons: ['*']                     # default ['*']
      options: [extend, keep_bounds, close, inspect_provider_console]
      largestExtension: 1h
      mostExtraChecks: 20
    - name: alice-may-cancel
      who: [alice@example.com]
      options: [cancel_at_provider]
      signed: true
  signaturesRequired:
    options: [cancel_at_provider]
    extensionsOver: 1h
  extensionRequests: { most: 3, within: 1h }
`;

const AGENTS_YAML = `authorisedBy: policy:agents@ops
stdioIdentity: agent:report-writer
agents:
  - identity: agent:report-writer
    token: { sha256: ${'ab'.repeat(32)} }
    providers:
      - name: demo-reports
        maxCreateDeadline: 5m
        maxResultDeadline: 2h
        maxStatusRequests: 60
`;

/** Writes `text` to a new file in this run's temporary directory. */
function policyFile(text: string, name = 'policy.yaml'): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'decider-policy-')), name);
  writeFileSync(file, text);
  return file;
}

function problems(document: unknown): { path: string; message: string }[] {
  try {
    deciderPolicyFrom(document, 'policy.yaml');
  } catch (err) {
    if (!(err instanceof PolicyFileError)) throw err;
    expect(err.code).toBe('ASYNCJOB_ERR_POLICY_INVALID');
    return err.issues;
  }
  throw new Error('expected the policy to be refused');
}

describe('the deciders section of the policy file (D2, D3, D4)', () => {
  it('D2, D3, D4: the documented form loads normalised: identities canonical, durations in ms, defaults filled', () => {
    const { digest, policy } = loadDeciderPolicy(policyFile(`version: 1\n${DECIDERS_YAML}`));
    expect(policy).toEqual({
      deciders: [{ identity: 'alice@example.com', keys: [ALICE_KEY] }],
      groups: { oncall: ['alice@example.com', 'bob@example.com'] },
      rules: ONCALL_RULES,
      signatures: { options: ['cancel_at_provider'], extensionsOverMs: 3_600_000 },
      extensionRequests: { most: 3, withinMs: 3_600_000 },
    });
    expect(digest).toBe(deciderPolicyDigest(policy));
    const asked = {
      provider: 'acme',
      reason: 'deadline_exceeded',
      option: 'close',
      decider: 'BOB@example.com',
    } as const;
    expect(deciderVerdict(policy, asked)).toMatchObject({ kind: 'allowed', rule: 'oncall-may-extend' });
  });

  it('D2, D4: without signaturesRequired and extensionRequests, none is required and three requests an hour are taken', () => {
    const { policy } = deciderPolicyFrom(
      { version: 1, deciders: { rules: [{ name: 'r', who: ['alice@example.com'], options: ['close'] }] } },
      'p.yaml',
    );
    expect(policy).toMatchObject({
      deciders: [],
      groups: {},
      signatures: { options: [] },
      extensionRequests: { most: 3, withinMs: 3_600_000 },
    });
  });

  it('D2: the same policy as JSON has the same digest as the YAML one', () => {
    const yaml = loadDeciderPolicy(policyFile(`version: 1\n${DECIDERS_YAML}`));
    const document = parseYaml(`version: 1\n${DECIDERS_YAML}`) as unknown;
    const json = loadDeciderPolicy(policyFile(JSON.stringify(document), 'policy.json'));
    expect(json.digest).toBe(yaml.digest);
  });

  it('D1, D2, D3: a bad section is refused with every problem named at once', () => {
    const issues = problems({
      version: 1,
      approvers: ['alice@example.com'],
      deciders: {
        keys: {
          'alice@example.com': [ALICE_KEY],
          'Alice@Example.com ': [ALICE_KEY],
          'carol@example.com': ['ed25519:not-a-key'],
          'agent:report\u200b-writer': [ALICE_KEY],
        },
        groups: { oncall: ['alice@example.com'] },
        rules: [
          { name: 'extend', who: ['group:nightshift'], options: ['extend'], largestExtension: 'an hour' },
          { name: 'extend', who: ['dave\u202e@example.com'], options: ['approve'] },
        ],
      },
    });
    const named = (pathText: string) => issues.filter((issue) => issue.path === pathText).map((i) => i.message);
    expect(named('approvers')).toEqual([expect.stringContaining('unknown section')]);
    expect(named('deciders.keys.Alice@Example.com ')).toEqual(['the same decider as "alice@example.com"']);
    expect(named('deciders.keys.carol@example.com.0')).toEqual(['must be ed25519: and 64 lowercase hex characters']);
    expect(named('deciders.keys.agent:report\\u{200B}-writer')).toEqual([
      'not an identity: holds an invisible or control character (U+200B)',
    ]);
    expect(named('deciders.rules.0.who.0')).toEqual(['no group "nightshift" is defined']);
    expect(named('deciders.rules.0.largestExtension')).toEqual([
      expect.stringContaining('"an hour" is not a duration'),
    ]);
    expect(named('deciders.rules.1.name')).toEqual(['named twice']);
    expect(named('deciders.rules.1.who.0')).toEqual([
      'not an identity: holds an invisible or control character (U+202E)',
    ]);
    expect(named('deciders.rules.1.options.0')).toHaveLength(1);
  });

  it('D2: a file without a deciders section, or of another version, is refused naming it', () => {
    expect(problems({ version: 1 }).map((i) => i.path)).toContain('deciders');
    expect(problems({ version: 2, deciders: { rules: [] } }).map((i) => i.path)).toEqual(
      expect.arrayContaining(['version', 'deciders.rules']),
    );
  });

  it('D2: an unreadable or malformed file is refused naming the file', () => {
    expect(() => loadDeciderPolicy(path.join(os.tmpdir(), 'no-such-policy.yaml'))).toThrow(/cannot read/);
    expect(() => loadDeciderPolicy(policyFile('deciders: [unclosed'))).toThrow(PolicyFileError);
  });

  it('D2, G1: one file holds both the agents and the deciders: each reader takes its own section', () => {
    const file = policyFile(`version: 1\n${AGENTS_YAML}${DECIDERS_YAML}`);
    const agents = loadAgentPolicy(file, {});
    expect(agents.agents.map((a) => a.identity)).toEqual(['agent:report-writer']);
    const deciders = loadDeciderPolicy(file);
    expect(deciders.policy.rules.map((r) => r.name)).toEqual(['oncall-may-extend', 'alice-may-cancel']);
    expect(deciders.digest).toBe(loadDeciderPolicy(policyFile(`version: 1\n${DECIDERS_YAML}`)).digest);
  });
});
