/**
 * The join rule (I2 and what follows it): a start whose operation ID exists with the same payload and provider
 * joins it only when the other settings are the operation's too (policy, deadlines, starter, authoriser, client
 * reference); otherwise it is refused with every differing field named, and nothing changes. The variables are
 * part of the fingerprint; a start that differs from the operation only by them is refused naming each one. A deadline given as
 * a duration counts from the operation's creation, so `{ afterMs }` repeated later is the same deadline, and an
 * absolute deadline equal (within a second) to the operation's resolved one is the same too.
 */
import { canonicalJson } from '../core/canonical-json';
import { requestFingerprint } from '../core/fingerprint';
import type { DeadlineInput, StartRequest } from '../core/operation';
import { pollPolicySchema } from '../core/policy';
import { call, type ClientContext } from './context';
import { type JoinDifference, JoinMismatchError } from './errors';
import { readRunStart } from './history';

/** Two deadlines this close are the same one (the workflow resolves a duration at its own first moment). */
export const DEADLINE_TOLERANCE_MS = 1_000;

function resolve(deadline: DeadlineInput, createdAtMs: number): number {
  return 'afterMs' in deadline ? createdAtMs + deadline.afterMs : deadline.atMs;
}

/** The policy with its defaults, so an omitted field and its default value compare equal. */
function effectivePolicy(policy: StartRequest['policy']): Record<string, unknown> {
  const parsed = pollPolicySchema.safeParse(policy ?? {});
  return parsed.success ? (parsed.data as Record<string, unknown>) : { ...(policy ?? {}) };
}

function policyDifferences(existing: StartRequest['policy'], given: StartRequest['policy']): JoinDifference[] {
  const a = effectivePolicy(existing);
  const b = effectivePolicy(given);
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return fields
    .filter((f) => canonicalJson(a[f] ?? null) !== canonicalJson(b[f] ?? null))
    .map((f) => ({ field: `policy.${f}`, existing: a[f], given: b[f] }));
}

/**
 * The settings in which `given` differs from the operation's own request, `existing`, created at
 * `createdAtMs`. The payload and the provider are not compared here: a change of either is a fingerprint
 * mismatch (I2). Pure.
 */
export function joinDifferences(existing: StartRequest, createdAtMs: number, given: StartRequest): JoinDifference[] {
  const out: JoinDifference[] = [];
  for (const field of ['startedBy', 'authorisedBy', 'clientReference'] as const) {
    if (existing[field] !== given[field]) out.push({ field, existing: existing[field], given: given[field] });
  }
  for (const field of ['createDeadline', 'resultDeadline'] as const) {
    if (Math.abs(resolve(existing[field], createdAtMs) - resolve(given[field], createdAtMs)) > DEADLINE_TOLERANCE_MS) {
      out.push({ field, existing: existing[field], given: given[field] });
    }
  }
  return [...out, ...policyDifferences(existing.policy, given.policy)];
}

/**
 * The variables in which `given` differs from `existing`, each as `variables.<name>` (absent on one side:
 * undefined there). Pure.
 */
export function variableDifferences(
  existing: StartRequest['variables'],
  given: StartRequest['variables'],
): JoinDifference[] {
  const a = existing ?? {};
  const b = given ?? {};
  return [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .sort()
    .filter((name) => a[name] !== b[name])
    .map((name) => ({ field: `variables.${name}`, existing: a[name], given: b[name] }));
}

/**
 * After a fingerprint mismatch (I2): when the operation's own request has the same payload and differs only by
 * its variables, throws {@link JoinMismatchError} naming each variable; otherwise returns, and the caller refuses
 * the fingerprint. Reads the run's history (no worker needed).
 */
export async function assertSameVariables(
  ctx: ClientContext,
  operationId: string,
  runId: string,
  given: StartRequest,
): Promise<void> {
  const start = await call(ctx, operationId, () => readRunStart(ctx, operationId, runId));
  const existing = start.input?.request;
  if (!existing || requestFingerprint(existing.payload) !== requestFingerprint(given.payload)) return;
  const differences = variableDifferences(existing.variables, given.variables);
  if (differences.length > 0) throw new JoinMismatchError(operationId, differences);
}

/**
 * Reads the request the operation's run was started with (its history: no worker needed) and throws
 * {@link JoinMismatchError} when `given` differs from it in any setting. A workflow started without our input
 * (not an asyncjob start) is not compared.
 */
export async function assertSameSettings(
  ctx: ClientContext,
  operationId: string,
  runId: string,
  given: StartRequest,
): Promise<void> {
  const start = await call(ctx, operationId, () => readRunStart(ctx, operationId, runId));
  const existing = start.input?.request;
  if (!existing) return;
  const createdAtMs = start.carried?.record.createdAtMs ?? start.startedAtMs;
  const differences = joinDifferences(existing, createdAtMs, given);
  if (differences.length > 0) throw new JoinMismatchError(operationId, differences);
}
