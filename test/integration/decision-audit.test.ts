/**
 * Every decision leaves a verifiable store (T5), end to end: for each escalation reason the simulator reaches and
 * each option the running workflow offers for it (read from the open escalation, so from the real escalation code),
 * the decision goes through the client (the path `asyncjob decide` takes), the operation is let finish, and
 * `asyncjob audit verify --with-temporal` on the SQLite store must find nothing. Every reason but `job_id_conflict`
 * (a second job reported for one request) is reached here; the pure property test (test/audit/bound-replay.test.ts)
 * raises all of them.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runAuditCommand } from '../../src/audit/cli';
import { type Decision, type OfferedOption } from '../../src/core/escalation';
import { type EscalationReason } from '../../src/core/journal';
import { type StartRequest } from '../../src/core/operation';
import { startHarness, type Harness } from '../workflows/harness';

const APPROVER = 'bob@example.com';
const AGENT = 'agent:planner';
const POLICY = { baseDelayMs: 20, maxDelayMs: 100, extensionMs: 20_000, extensionStatusRequests: 6 };

const scripts = {
  /** Running past the result deadline of its case, however loaded the machine. */
  slow: { steps: [{ state: 'running', durationMs: 60_000 }, { state: 'succeeded' }] },
  /**
   * Still running when the agent asks, however loaded the machine: at least 5 s, then 40 more status reads (a slow
   * machine reads more slowly too).
   */
  long: { steps: [{ state: 'running', durationMs: 5_000 }, { state: 'running', polls: 40 }, { state: 'succeeded' }] },
  many_polls: { steps: [{ state: 'running', polls: 4 }, { state: 'succeeded' }] },
  flaky: {
    steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }],
    faults: [
      { on: 'status', nth: 1, fault: { kind: 'http_error', status: 500 } },
      { on: 'status', nth: 2, fault: { kind: 'http_error', status: 500 } },
    ],
  },
  review: { steps: [{ state: 'running', polls: 1 }, { state: 'manual_review', polls: 1 }, { state: 'succeeded' }] },
  throttled: {
    steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }],
    faults: [1, 2, 3].map((nth) => ({ on: 'status', nth, fault: { kind: 'http_error', status: 429 } })),
  },
  denied: {
    steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }],
    faults: [{ on: 'status', nth: 1, fault: { kind: 'http_error', status: 401 } }],
  },
  mismatched: {
    steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }],
    faults: [{ on: 'result', nth: 1, fault: { kind: 'result_mismatch', field: 'checksum' } }],
  },
  /** Still running when the cancel is asked (as `long`); every cancel is answered 501 (the provider cannot cancel it). */
  uncancellable: {
    steps: [{ state: 'running', durationMs: 5_000 }, { state: 'running', polls: 40 }, { state: 'succeeded' }],
    faults: [{ on: 'cancel', nth: 'every', fault: { kind: 'http_error', status: 501 } }],
  },
};

/** The operation-location simulator refuses each operation's first create as malformed (400); a re-send is taken. */
const rejectedCreate = { faults: [{ on: 'create', nth: 1, fault: { kind: 'http_error', status: 400 } }] };

/**
 * The lro simulator answers every create with 503 and every reconciliation with 500 (scenario-wide: no job exists
 * for a job script's faults to apply to): whether a job was created stays unknown.
 */
const lostCreate = {
  scripts: { lost_create: {} },
  faults: [
    { on: 'create', nth: 'every', fault: { kind: 'http_error', status: 503 } },
    { on: 'reconcile', nth: 'every', fault: { kind: 'http_error', status: 500 } },
  ],
};

/** How each case reaches its escalation: the start request, and what to do once it runs. */
interface Case {
  reason: EscalationReason;
  request: (h: Harness) => StartRequest;
  /** Asks for the escalation when the workflow does not raise it itself (an agent's extension request). */
  ask?: (h: Harness, operationId: string) => Promise<void>;
}

const CASES: Case[] = [
  {
    reason: 'deadline_exceeded',
    request: (h) =>
      h.request('rest', {
        script: 'slow',
        // The create is sent well inside its deadline on a loaded machine (one written after it is never sent, I3),
        // so every operation of this case has its job when the result deadline passes.
        createDeadline: { afterMs: 5_000 },
        resultDeadline: { afterMs: 6_000 },
        policy: POLICY,
      }),
  },
  {
    reason: 'request_budget_exhausted',
    request: (h) => h.request('rest', { script: 'many_polls', policy: { ...POLICY, maxStatusRequests: 2 } }),
  },
  {
    reason: 'provider_failure',
    request: (h) => h.request('rest', { script: 'flaky', policy: { ...POLICY, maxTransportFailures: 2 } }),
  },
  { reason: 'unknown_state', request: (h) => h.request('rest', { script: 'review', policy: POLICY }) },
  {
    reason: 'create_unknown',
    // The create's 503 and the reconciliation's 500 spend the transport budget: whether a job exists is unknown;
    // a re-sent create meets the same answers and escalates again (then closed).
    request: (h) => h.request('lro', { script: 'lost_create', policy: { ...POLICY, maxTransportFailures: 2 } }),
  },
  {
    reason: 'rate_limited',
    request: (h) => h.request('rest', { script: 'throttled', policy: { ...POLICY, maxRateLimited: 2 } }),
  },
  { reason: 'authorization_denied', request: (h) => h.request('rest', { script: 'denied', policy: POLICY }) },
  {
    reason: 'result_validation_failed',
    request: (h) => h.request('rest', { script: 'mismatched', policy: POLICY }),
  },
  { reason: 'request_rejected', request: (h) => h.request('operation-location', { policy: POLICY }) },
  {
    reason: 'cancellation_unconfirmed',
    request: (h) => h.request('rest', { script: 'uncancellable', policy: POLICY }),
    ask: async (h, operationId) => {
      await waitFor(h, operationId, (s) => s === 'accepted' || s === 'observing');
      await h.client.cancel(operationId, { requestedBy: APPROVER, reason: 'no longer needed' });
    },
  },
  {
    reason: 'extension_requested',
    request: (h) => h.request('rest', { script: 'long', policy: POLICY }),
    ask: async (h, operationId) => {
      await waitFor(h, operationId, (s) => s === 'observing' || s === 'accepted');
      await h.client.requestExtension(operationId, {
        requestedBy: AGENT,
        reason: 'three years of data',
        // What a person could grant: the escalation's extension (D4).
        extendMs: POLICY.extensionMs,
      });
    },
  },
];

async function waitFor(h: Harness, operationId: string, check: (state: string) => boolean): Promise<void> {
  const end = Date.now() + 30_000;
  for (;;) {
    const state = await h.client.get(operationId).then(
      (r) => r.localState,
      () => 'unknown',
    );
    if (check(state)) return;
    if (Date.now() > end) throw new Error(`operation ${operationId} still ${state}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The decision for an offered option, at the most it offers. */
function decisionFor(option: OfferedOption): Decision {
  return {
    option: option.option,
    approvedBy: APPROVER,
    reason: `audit property: ${option.option}`,
    ...(option.option === 'extend'
      ? {
          extendMs: option.extendMs!,
          extraStatusRequests: option.extraStatusRequests!,
          ...(option.extraTransportFailures !== undefined
            ? { extraTransportFailures: option.extraTransportFailures }
            : {}),
          ...(option.extraRateLimited !== undefined ? { extraRateLimited: option.extraRateLimited } : {}),
        }
      : {}),
    ...(option.option === 'adopt_job' ? { jobId: option.jobIds![0]! } : {}),
  };
}

describe('T5: every decision leaves a store that audit verify --with-temporal finds intact', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('decision-audit', {
      scenarios: { rest: { scripts }, lro: lostCreate, 'operation-location': rejectedCreate } as never,
    });
  });
  afterAll(async () => h?.stop());

  /** Starts an operation of `c` and waits for its escalation; returns its ID and the options offered. */
  async function escalated(c: Case): Promise<{ operationId: string; options: OfferedOption[] }> {
    const request = c.request(h);
    await h.client.start(request);
    if (c.ask) await c.ask(h, request.operationId);
    const summary = await h.client.result(request.operationId);
    expect(summary.escalation?.reason).toBe(c.reason);
    const escalation = await h.client.escalation(request.operationId);
    return { operationId: request.operationId, options: escalation!.options };
  }

  /** Decides `option`, then lets the operation end: a later escalation (or one left open by inspect) is closed. */
  async function decideAndFinish(operationId: string, option: OfferedOption): Promise<string> {
    expect(await h.client.decide(operationId, decisionFor(option))).toMatchObject({ accepted: true });
    for (let i = 0; i < 5; i++) {
      const summary = await h.client.result(operationId);
      if (summary.localState !== 'escalated') return summary.localState;
      const open = await h.client.escalation(operationId);
      const close = open!.options.find((o) => o.option === 'close')!;
      await h.client.decide(operationId, decisionFor(close));
    }
    throw new Error(`operation ${operationId} still escalated`);
  }

  /** `asyncjob audit verify --operation <id> --with-temporal --json` on the harness's store. */
  async function verify(operationId: string): Promise<{ code: number; report: { ok: boolean; breaks: unknown[] } }> {
    let out = '';
    let err = '';
    const argv = ['verify', '--operation', operationId, '--store', `sqlite:${path.join(h.dataDir, 'asyncjob.db')}`];
    const code = await runAuditCommand([...argv, '--with-temporal', '--json'], {
      stdout: (text) => (out += text),
      stderr: (text) => (err += text),
      env: {
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        ASYNCJOB_TASK_QUEUE: h.taskQueue,
      },
      settleMs: 200,
    });
    expect(err).toBe('');
    return { code, report: JSON.parse(out) as { ok: boolean; breaks: unknown[] } };
  }

  it.concurrent.each(CASES.map((c) => [c.reason, c] as const))(
    'T5: %s: each option offered, decided through the client, then the operation finished: audit verify --with-temporal is intact',
    async (_reason, c) => {
      const first = await escalated(c);
      expect(first.options.length).toBeGreaterThan(0);
      const runs = first.options.map(async (option, i) => {
        const operationId = i === 0 ? first.operationId : (await escalated(c)).operationId;
        const ended = await decideAndFinish(operationId, option);
        const { code, report } = await verify(operationId);
        return { option: option.option, ended, code, breaks: report.breaks, ok: report.ok };
      });
      const results = await Promise.all(runs);
      for (const r of results) expect(r, r.option).toMatchObject({ code: 0, ok: true, breaks: [] });
      expect(results.map((r) => r.option)).toEqual(first.options.map((o) => o.option));
    },
  );
});
