import { type DeciderPolicy } from '../../src/core/decider-policy';
import { answerSignal } from '../../src/adapters/providers/answer-signal';
import { type Observation } from '../../src/core/observation';
import { newOperationRecord, type OperationRecord } from '../../src/core/operation';
import { type PollPolicyInput } from '../../src/core/policy';

/** 2026-11-29T10:00:00.000Z */
export const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);
export const TOKEN = 'AAECAwQFBgcICQoLDA0ODw';

/** A fresh record in create_pending, created at T0, create deadline +2 min, result deadline +1 h. */
export function newRecord(policy: PollPolicyInput = {}, overrides: Record<string, unknown> = {}): OperationRecord {
  const result = newOperationRecord({
    request: {
      operationId: 'op-1',
      provider: 'acme',
      payload: { report: 'sales', year: 2026 },
      startedBy: 'svc:billing',
      authorisedBy: 'alice@example.com',
      createDeadline: { afterMs: 120_000 },
      resultDeadline: { afterMs: 3_600_000 },
      policy,
      ...overrides,
    },
    nowMs: T0,
    idempotencyToken: TOKEN,
    traceId: 'trace-1',
  });
  if (result.kind !== 'ok') throw new Error(JSON.stringify(result.issues));
  return result.record;
}

/** An observation with defaults: a 200 status answer at `receivedAtMs`. */
export function obs(partial: Partial<Observation> = {}): Observation {
  return observed({ action: 'status', transport: 'response', httpStatus: 200, receivedAtMs: T0 + 1000, ...partial });
}

/** A record in `observing` with job `job_7ad2`, accepted at T0 + 1 s. */
export function observingRecord(policy: PollPolicyInput = {}): OperationRecord {
  const r = newRecord(policy);
  return {
    ...r,
    localState: 'observing',
    jobId: 'job_7ad2',
    acceptedAtMs: T0 + 1000,
    remote: { ...r.remote, jobIds: ['job_7ad2'], state: 'running', category: 'pending' },
    schedule: { reservedAtMs: T0 + 1000 },
    used: { ...r.used, statusRequests: 1 },
  };
}

/** An observation with the signal the adapters would classify it into (`answerSignal`), unless one is given. */
export function observed(o: Omit<Observation, 'signal'> & { signal?: Observation['signal'] }): Observation {
  return { ...o, signal: o.signal ?? answerSignal(o) };
}

/**
 * The rules the decider tests share (D2): the on-call group may extend by up to an hour with 20 more checks, keep
 * bounds, close or look; only alice may cancel at the provider, signed.
 */
export const ONCALL_RULES = [
  {
    name: 'oncall-may-extend',
    who: ['group:oncall'],
    providers: ['*'],
    reasons: ['*'],
    options: ['extend', 'keep_bounds', 'close', 'inspect_provider_console'],
    largestExtensionMs: 3_600_000,
    mostExtraChecks: 20,
  },
  {
    name: 'alice-may-cancel',
    who: ['alice@example.com'],
    providers: ['*'],
    reasons: ['*'],
    options: ['cancel_at_provider'],
    signed: true,
  },
] satisfies DeciderPolicy['rules'];
