/**
 * Every route a decision can take reaches the one check (`core/decision-check.ts` `checkDecision`) under the
 * decider policy the operation started with: the client library's update (`api`), `asyncjob decide` (`cli`), the
 * `decide` signal the Web UI's form sends (`web-ui`), a raw update from any Temporal client, and an agent's request
 * through the MCP tools. Each refusal is journalled with its route; each acceptance with its route, rule and
 * signature. One policy file holds both the agents and the deciders sections.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentServerFactory, loadAgentPolicy } from '../../src/mcp';
import { decisionBounds } from '../../src/core/decision-check';
import { signDecision } from '../../src/core/decision-signature';
import type { Decision } from '../../src/core/escalation';
import { loadDeciderPolicy } from '../../src/policy/decider-policy-file';
import { FileArtifactStore } from '../../src/adapters/artifacts/artifact-store';
import { decideSignal, decideUpdate } from '../../src/workflows/messages';
import { startHarness, type Harness } from '../workflows/harness';
import { runOn } from './front-door-cli';

const bob = ed25519.keygen();
const BOB_KEY = `ed25519:${bytesToHex(bob.publicKey)}`;

/** The operator's policy file: the agent and who may decide what; cancels must be signed. */
function policyYaml(provider: string): string {
  return [
    'version: 1',
    'authorisedBy: policy:decider-routes',
    'agents:',
    '  - identity: agent:alpha',
    '    providers:',
    `      - { name: ${provider}, maxCreateDeadline: 1m, maxResultDeadline: 10m, maxStatusRequests: 500 }`,
    'deciders:',
    '  keys:',
    `    bob@example.com: [${BOB_KEY}]`,
    '  groups:',
    '    oncall: [bob@example.com, carol@example.com]',
    '  rules:',
    '    - name: oncall-decides',
    '      who: [group:oncall]',
    '      options: [extend, keep_bounds, close, inspect_provider_console, cancel_at_provider]',
    '      largestExtension: 10m',
    '  signaturesRequired:',
    '    options: [cancel_at_provider]',
    '',
  ].join('\n');
}

describe('decision routes under a decider policy (D1, D2, D3, D5, G2)', () => {
  let h: Harness;
  let dir: string;
  let policyFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-decider-routes-'));
    policyFile = path.join(dir, 'policy.yaml');
    // The deciders section names no provider; the agent's grant names the harness's, known once it runs.
    await writeFile(policyFile, policyYaml('unknown'));
    h = await startHarness('decider-routes', {
      scenarios: { rest: { scripts: { forever: { steps: [{ state: 'running' }] } } } } as never,
      deciders: loadDeciderPolicy(policyFile),
    });
    await writeFile(policyFile, policyYaml(h.provider('rest')));
  });
  afterAll(async () => h?.stop());

  /** Starts an operation and raises an extension_requested escalation for `requester`. */
  async function escalated(requester = 'agent:beta'): Promise<string> {
    const request = h.request('rest', { script: 'forever' });
    await h.client.start(request);
    await until(async () => ['accepted', 'observing'].includes((await h.client.get(request.operationId)).localState));
    await h.client.requestExtension(request.operationId, {
      requestedBy: requester,
      reason: 'the report covers three years',
      extendMs: 60_000,
    });
    return request.operationId;
  }

  async function decisions(operationId: string) {
    return (await h.store.entries(operationId)).map((e) => e.entry.body).filter((b) => b.kind === 'decision');
  }

  async function refusalOf(promise: Promise<unknown>): Promise<string> {
    const error = await promise.then(
      () => undefined,
      (err: unknown) => err as { code?: string; refusalCode?: string; message: string },
    );
    if (error === undefined) throw new Error('accepted');
    return `${(error as { refusalCode?: string }).refusalCode ?? (error as { code?: string }).code}: ${error.message}`;
  }

  it('D2, D5: the client (api route): a decider no rule names is refused naming it; a named one is accepted with its rule', async () => {
    const operationId = await escalated();
    const extend = { option: 'extend', reason: 'approved', extendMs: 60_000, extraStatusRequests: 2 } as const;
    expect(await refusalOf(h.client.decide(operationId, { ...extend, approvedBy: 'mallory@example.com' }))).toMatch(
      /ASYNCJOB_ERR_DECIDER_NOT_ALLOWED.*mallory@example\.com/,
    );
    await h.client.decide(operationId, { ...extend, approvedBy: ' Carol@Example.COM ' });
    const [accepted] = (await decisions(operationId)).filter((d) => d.kind === 'decision' && d.accepted);
    expect(accepted).toMatchObject({
      approvedBy: 'carol@example.com',
      route: 'api',
      policy: { rule: 'oncall-decides' },
    });
    expect(accepted).not.toHaveProperty('signature');
  });

  it('D1, G2: an agent asks through the MCP tools; its own approval is refused in every spelling, by every route', async () => {
    const request = h.request('rest', { script: 'forever' });
    const policy = loadAgentPolicy(policyFile);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = agentServerFactory({
      client: h.client,
      storeLocation: `sqlite:${path.join(dir, 'unused.db')}`,
      artifacts: new FileArtifactStore(dir),
      env: {},
      log: () => undefined,
    })(policy.agents[0]!);
    await server.connect(serverSide);
    const mcp = new McpClient({ name: 'decider-routes', version: '1.0.0' });
    await mcp.connect(clientSide);
    try {
      const started = await mcp.callTool({
        name: 'start_operation',
        arguments: { operationId: request.operationId, provider: request.provider, payload: request.payload },
      });
      expect(started.isError).not.toBe(true);
      await until(async () => ['accepted', 'observing'].includes((await h.client.get(request.operationId)).localState));
      const asked = await mcp.callTool({
        name: 'request_extension',
        arguments: { operationId: request.operationId, reason: 'more pages than expected', extendMs: 60_000 },
      });
      expect(asked.isError).not.toBe(true);
    } finally {
      await mcp.close();
    }
    const grant = { option: 'extend', reason: 'self', extendMs: 60_000, extraStatusRequests: 1 } as const;
    for (const spelling of ['agent:alpha', 'agent:alpha ', 'AGENT:Alpha']) {
      expect(await refusalOf(h.client.decide(request.operationId, { ...grant, approvedBy: spelling }))).toMatch(
        /ASYNCJOB_ERR_DECIDER_NOT_ALLOWED|ASYNCJOB_ERR_SELF_APPROVAL/,
      );
    }
    const hidden = { ...grant, approvedBy: 'agent:al\u200bpha' };
    expect(await refusalOf(h.client.decide(request.operationId, hidden))).toMatch(/not an identity/);
    // The same decision as a raw update from any Temporal client, and as the Web UI's signal.
    const handle = h.env.client.workflow.getHandle(request.operationId);
    await expect(
      handle.executeUpdate(decideUpdate, { args: [{ ...grant, approvedBy: 'AGENT:alpha' }] }),
    ).rejects.toThrow();
    await handle.signal(decideSignal, { ...grant, approvedBy: 'Agent:Alpha ' } as Decision);
    await until(async () =>
      (await decisions(request.operationId)).some((d) => d.kind === 'decision' && d.route === 'web-ui'),
    );
    const journalled = await decisions(request.operationId);
    expect(journalled.every((d) => d.kind === 'decision' && !d.accepted)).toBe(true);
    expect(journalled.find((d) => d.kind === 'decision' && d.route === 'web-ui')).toMatchObject({
      approvedBy: 'agent:alpha',
      rejectionReason: expect.stringMatching(/^ASYNCJOB_ERR_(DECIDER_NOT_ALLOWED|SELF_APPROVAL)/) as unknown,
    });
    expect((await h.client.get(request.operationId)).localState).toBe('escalated');
  });

  it('D3, D5: an unsigned cancel from the Web UI signal is refused with the command to run; asyncjob decide --key signs it and it is accepted', async () => {
    const operationId = await escalated();
    const cancel = { option: 'cancel_at_provider', approvedBy: 'bob@example.com', reason: 'not needed' } as const;
    await h.env.client.workflow.getHandle(operationId).signal(decideSignal, cancel);
    await until(async () => (await decisions(operationId)).length > 0);
    const [refused] = await decisions(operationId);
    expect(refused).toMatchObject({ accepted: false, route: 'web-ui' });
    expect(refused?.kind === 'decision' && refused.rejectionReason).toContain(
      `ASYNCJOB_ERR_SIGNATURE_REQUIRED: the decider policy (rule "oncall-decides") requires this decision to be signed; run instead: asyncjob decide ${operationId} --option cancel_at_provider --by bob@example.com --reason "not needed" --sign`,
    );
    const keyFile = path.join(dir, 'bob.json');
    await writeFile(
      keyFile,
      JSON.stringify({ version: 1, for: 'bob@example.com', keyId: BOB_KEY, secretKey: bytesToHex(bob.secretKey) }),
      { mode: 0o600 },
    );
    const decide = ['decide', operationId, '--option', 'cancel_at_provider', '--by', 'bob@example.com'];
    const unsigned = await runOn(h.client, [...decide, '--reason', 'not needed']);
    expect(unsigned.stderr).toContain('ASYNCJOB_ERR_SIGNATURE_REQUIRED');
    const signed = await runOn(h.client, [...decide, '--reason', 'not needed', '--key', keyFile]);
    expect(signed.code, signed.stderr).toBe(0);
    const accepted = (await decisions(operationId)).find((d) => d.kind === 'decision' && d.accepted);
    expect(accepted).toMatchObject({
      decision: 'cancel_at_provider',
      approvedBy: 'bob@example.com',
      route: 'cli',
      policy: { rule: 'oncall-decides' },
      signature: { keyId: BOB_KEY },
    });
  });

  it('D3: a signature replayed on another escalation, or over changed bounds, is refused and journalled by every route', async () => {
    const first = await escalated();
    const second = await escalated();
    const escalationOf = async (operationId: string) => (await h.client.get(operationId)).escalation!;
    const firstEscalation = await escalationOf(first);
    const decision: Decision = {
      option: 'extend',
      approvedBy: 'bob@example.com',
      reason: 'one more look',
      extendMs: 60_000,
      extraStatusRequests: 1,
    };
    const signature = signDecision(bytesToHex(bob.secretKey), {
      operationId: first,
      escalationId: firstEscalation.id!,
      option: decision.option,
      bounds: decisionBounds(decision),
      decider: 'bob@example.com',
      reason: decision.reason,
      signedAt: new Date().toISOString(),
    });
    // Replayed on another operation's escalation (api route), and with a larger bound (web-ui route).
    expect(await refusalOf(h.client.decide(second, { ...decision, signature }))).toMatch(
      /ASYNCJOB_ERR_SIGNATURE_INVALID/,
    );
    // Journalled by the update's route too, before the update answered (A2).
    expect(await decisions(second)).toEqual([
      expect.objectContaining({
        accepted: false,
        route: 'api',
        signature: expect.objectContaining({ keyId: BOB_KEY }) as unknown,
        rejectionReason: expect.stringMatching(/^ASYNCJOB_ERR_SIGNATURE_INVALID/) as unknown,
      }),
    ]);
    await h.env.client.workflow.getHandle(first).signal(decideSignal, { ...decision, extendMs: 120_000, signature });
    await until(async () => (await decisions(first)).length > 0);
    expect((await decisions(first))[0]).toMatchObject({
      accepted: false,
      route: 'web-ui',
      signature: { keyId: BOB_KEY },
      rejectionReason: expect.stringMatching(/^ASYNCJOB_ERR_SIGNATURE_INVALID/) as unknown,
    });
    await h.client.decide(first, { ...decision, signature });
    expect((await decisions(first)).at(-1)).toMatchObject({ accepted: true, signature, route: 'api' });
  });
});

/** Waits for a fact (never a fixed sleep). */
async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}
