/**
 * A worker holding a decider policy (read from the operator's YAML file as `asyncjob worker` reads
 * ASYNCJOB_DECIDER_POLICY) gives it to every operation it starts: the operation keeps it whole in its intent entry,
 * and each decision is checked against it. One no rule names is refused, by update and by signal (journalled);
 * one a rule names is accepted within the rule's limits, and its journal entry names the policy and the rule.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeciderPolicyInForce } from '../../src/core/decider-policy';
import { loadDeciderPolicy } from '../../src/policy/decider-policy-file';
import { decideSignal } from '../../src/workflows/messages';
import { startHarness, type Harness } from './harness';

/** Who may decide: the on-call group extends an unknown state by at most one check; the lead may close. */
const POLICY_YAML = `version: 1
deciders:
  groups:
    oncall: [bob@example.com, carol@example.com]
  rules:
    - name: oncall-may-extend
      who: [group:oncall]
      reasons: [unknown_state]
      options: [extend, keep_bounds]
      mostExtraChecks: 1
    - name: lead-may-close
      who: [lead@example.com]
      options: [close]
`;

/** Waits for a fact, polling (no test sleeps for a fixed time). */
async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a worker holding a decider policy (D2, D5)', () => {
  let h: Harness;
  let deciders: DeciderPolicyInForce;

  beforeAll(async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'asyncjob-deciders-')), 'policy.yaml');
    await writeFile(file, POLICY_YAML);
    deciders = loadDeciderPolicy(file);
    const scripts = {
      // Escalates unknown_state on the second read; after an extension, the next read says succeeded.
      review_then_done: {
        steps: [{ state: 'running', polls: 1 }, { state: 'manual_review', polls: 1 }, { state: 'succeeded' }],
      },
    };
    h = await startHarness('deciders', { scenarios: { rest: { scripts } } as never, deciders });
  });
  afterAll(async () => h?.stop());

  const bodies = async (operationId: string) => (await h.store.entries(operationId)).map((e) => e.entry.body);

  it('D2, D5: the operation keeps the policy in its intent entry; a decider no rule names is refused (ASYNCJOB_ERR_DECIDER_NOT_ALLOWED), a named one is accepted and its entry names the rule', async () => {
    const request = h.request('rest', { script: 'review_then_done' });
    const operationId = request.operationId;
    await h.client.start(request);
    await until(async () => (await h.client.get(operationId)).localState === 'escalated');

    const intent = (await bodies(operationId)).find((b) => b.kind === 'intent');
    expect(intent?.kind === 'intent' && intent.deciderPolicy).toEqual(deciders);

    const extend = (await h.client.escalation(operationId))!.options.find((o) => o.option === 'extend')!;
    expect(extend.extraStatusRequests).toBeGreaterThan(1);
    const decision = {
      option: 'extend' as const,
      reason: 'reviewed in the provider console',
      extendMs: extend.extendMs!,
      extraStatusRequests: 1,
    };
    // By update (the client library): refused, and journalled (A2).
    await expect(
      h.client.decide(operationId, { ...decision, approvedBy: 'mallory@example.com' }),
    ).rejects.toMatchObject({
      refusalCode: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED',
      message: expect.stringContaining('mallory@example.com') as string,
    });
    // A rule names the decider, but not for this many checks: refused naming the rule.
    await expect(
      h.client.decide(operationId, { ...decision, approvedBy: 'bob@example.com', extraStatusRequests: 2 }),
    ).rejects.toMatchObject({
      refusalCode: 'ASYNCJOB_ERR_DECIDER_NOT_ALLOWED',
      message: expect.stringContaining('rule "oncall-may-extend" grants at most 1 extra checks') as string,
    });
    // By signal (anyone who can signal the workflow, as the Web UI's form): refused and journalled.
    await h.env.client.workflow
      .getHandle(operationId)
      .signal(decideSignal, { ...decision, approvedBy: 'mallory@example.com' });
    await until(async () => (await bodies(operationId)).filter((b) => b.kind === 'decision').length === 3);
    expect((await h.client.get(operationId)).localState).toBe('escalated');

    const answer = await h.client.decide(operationId, { ...decision, approvedBy: 'carol@example.com' });
    expect(answer.accepted).toBe(true);
    expect((await h.client.result(operationId)).localState).toBe('succeeded');

    const decisions = (await bodies(operationId)).filter((b) => b.kind === 'decision');
    const malloryRefused = (route: 'api' | 'web-ui') =>
      expect.objectContaining({
        approvedBy: 'mallory@example.com',
        accepted: false,
        route,
        rejectionReason: expect.stringMatching(/^ASYNCJOB_ERR_DECIDER_NOT_ALLOWED: .*mallory@example\.com/) as string,
        policy: { digest: deciders.digest },
      });
    expect(decisions).toEqual([
      malloryRefused('api'),
      expect.objectContaining({
        approvedBy: 'bob@example.com',
        accepted: false,
        route: 'api',
        rejectionReason: expect.stringContaining('rule "oncall-may-extend" grants at most 1 extra checks') as string,
      }),
      malloryRefused('web-ui'),
      expect.objectContaining({
        decision: 'extend',
        approvedBy: 'carol@example.com',
        accepted: true,
        route: 'api',
        policy: { digest: deciders.digest, rule: 'oncall-may-extend' },
      }),
    ]);
  });
});
