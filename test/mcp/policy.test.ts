/**
 * The operator's agent policy file (G1, G3): the example loads, a bad file is refused with every problem named
 * (never a token), tokens are known only by digest, and starts and extensions are held to the bounds.
 */
import { describe, expect, it } from 'vitest';
import { AgentPolicyError, agentForToken, agentPolicyFrom, loadAgentPolicy, tokenDigest } from '../../src/mcp';
import { boundedStartRequest, checkCancel, checkExtension } from '../../src/mcp/bounds';
import { AgentToolError } from '../../src/mcp/errors';

const EXAMPLE = 'examples/agents/policy.yaml';
const env = { REPORT_WRITER_MCP_TOKEN: 'writer-token-0123456789' };

function refusal(fn: () => unknown): { code: string; bound?: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof AgentToolError)
      return { code: err.code, message: err.message, ...(err.bound ? { bound: err.bound } : {}) };
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('agent policy file (G1, G3)', () => {
  it('G3: the example policy loads; each token is known by its digest only and names one agent', () => {
    const policy = loadAgentPolicy(EXAMPLE, env);
    expect(policy.stdioIdentity).toBe('agent:report-writer');
    expect(policy.agents.map((a) => a.identity)).toEqual(['agent:report-writer', 'agent:triage-bot']);
    expect(agentForToken(policy, 'writer-token-0123456789')?.identity).toBe('agent:report-writer');
    expect(agentForToken(policy, 'test')?.identity).toBe('agent:triage-bot');
    expect(agentForToken(policy, 'nobody')).toBeUndefined();
    expect(JSON.stringify(policy)).not.toContain('writer-token-0123456789');
    expect(policy.agents[0]!.providers[0]).toMatchObject({
      maxCreateDeadlineMs: 300_000,
      maxResultDeadlineMs: 7_200_000,
    });
  });

  it('D1: an identity in the file is taken in canonical form, so Agent:Alpha is agent:alpha', () => {
    const provider = { name: 'p', maxCreateDeadline: '1m', maxResultDeadline: '1h', maxStatusRequests: 5 };
    const policy = agentPolicyFrom(
      {
        version: 1,
        authorisedBy: 'policy:agents@ops',
        stdioIdentity: 'AGENT:Alpha',
        agents: [{ identity: 'Agent:Alpha', providers: [provider] }],
      },
      'p.yaml',
      {},
    );
    expect(policy.agents.map((a) => a.identity)).toEqual(['agent:alpha']);
    expect(policy.stdioIdentity).toBe('agent:alpha');
  });

  it('a bad policy file is refused with every problem named, and a missing token source is named without a value', () => {
    const bad = {
      version: 1,
      authorisedBy: 'policy:x',
      stdioIdentity: 'agent:ghost',
      agents: [
        { identity: 'alice', providers: [] },
        {
          identity: 'agent:b',
          token: { secretEnv: 'UNSET_TOKEN' },
          providers: [{ name: 'p', maxCreateDeadline: 'soon', maxResultDeadline: '1h', maxStatusRequests: 0 }],
          maxWait: '10m',
        },
      ],
    };
    let error: unknown;
    try {
      agentPolicyFrom(bad, 'bad.yaml', {});
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(AgentPolicyError);
    const paths = (error as AgentPolicyError).issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'agents.0.identity',
        'agents.0.providers',
        'agents.1.providers.0.maxCreateDeadline',
        'agents.1.providers.0.maxStatusRequests',
      ]),
    );
    expect((error as AgentPolicyError).code).toBe('ASYNCJOB_ERR_POLICY_INVALID');
    const unresolved = {
      ...bad,
      stdioIdentity: undefined,
      agents: [
        {
          ...bad.agents[1],
          providers: [{ name: 'p', maxCreateDeadline: '1m', maxResultDeadline: '1h', maxStatusRequests: 5 }],
          maxWait: '10s',
        },
      ],
    };
    expect(() => agentPolicyFrom(unresolved, 'bad.yaml', {})).toThrow(
      /agents.0.token: environment variable UNSET_TOKEN is not set/,
    );
    expect(() => loadAgentPolicy('examples/agents/missing.yaml')).toThrow(AgentPolicyError);
  });

  it('G1: a start outside the policy is refused naming the bound; inside it, the agent is startedBy and the operator authorised it', () => {
    const agent = loadAgentPolicy(EXAMPLE, env).agents[1]!;
    const base = { operationId: 'op-1', provider: 'demo-reports', payload: { report: 'x' } };
    expect(refusal(() => boundedStartRequest(agent, { ...base, provider: 'billing' }))).toMatchObject({
      code: 'ASYNCJOB_ERR_POLICY_REFUSED',
      bound: 'providers',
    });
    expect(refusal(() => boundedStartRequest(agent, { ...base, resultDeadlineMs: 3_600_000 }))).toMatchObject({
      bound: 'maxResultDeadline',
    });
    expect(refusal(() => boundedStartRequest(agent, { ...base, maxStatusRequests: 11 })).message).toContain(
      'at most 10',
    );
    expect(boundedStartRequest(agent, base)).toMatchObject({
      startedBy: 'agent:triage-bot',
      authorisedBy: 'policy:agents@ops',
      createDeadline: { afterMs: 60_000 },
      resultDeadline: { afterMs: 900_000 },
      policy: { maxStatusRequests: 10 },
    });
    expect(refusal(() => checkCancel(agent))).toMatchObject({ bound: 'mayCancel' });
    expect(refusal(() => checkExtension(agent, 'demo-reports', { extraStatusRequests: 50 }))).toMatchObject({
      bound: 'maxStatusRequests',
    });
    expect(tokenDigest('test').toString('hex')).toBe(
      '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    );
  });
});
