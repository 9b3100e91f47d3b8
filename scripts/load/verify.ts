/**
 * A load run's checks, from the simulators' accounting and the store, never from the workflow's own opinion:
 * every operation ends in a final state or a bounded escalation; zero duplicate provider jobs (jobs per
 * idempotency token <= 1); zero lost results (every succeeded operation has exactly one valid artifact whose bytes
 * hash to the sha256 of the payload the simulator served; every job the provider finished belongs to an operation
 * that succeeded or escalated).
 */
import { digestOf, type ArtifactStore } from '../../src/adapters/artifacts/artifact-store';
import type { OperationStore } from '../../src/adapters/store/operation-store';
import type { AsyncJobClient } from '../../src/client';
import type { EscalationReason, LocalState } from '../../src/core/journal';
import type { OperationRecord } from '../../src/core/operation';
import type { OperationSummary } from '../../src/workflows/messages';
import { renderPayload, type Simulator } from '../../src/simulator';
import { REVIEW_STATE, type Dialect, type PlannedOperation } from './plan';

/** One violation of the run's invariants. */
export interface LoadViolation {
  operationId: string;
  kind:
    | 'not_final'
    | 'duplicate_job'
    | 'lost_result'
    | 'bad_artifact'
    | 'unbounded_escalation'
    | 'error'
    /** Through Nexus: the caller received another end than the operation's, or is not its recorded starter. */
    | 'nexus_mismatch';
  detail: string;
}

/** Escalations a run may end in: each is bounded (counted budgets, deadlines) and answerable by a human. */
const BOUNDED_ESCALATIONS: ReadonlySet<EscalationReason> = new Set([
  'provider_failure',
  'rate_limited',
  'create_unknown',
  'request_budget_exhausted',
  'deadline_exceeded',
  'cancellation_unconfirmed',
  'result_validation_failed',
]);
const FINAL_STATES: ReadonlySet<LocalState> = new Set([
  'succeeded',
  'failed',
  'cancelled',
  'escalated',
  'result_unavailable',
  'result_validation_failed',
  'result_timed_out',
  'cancellation_unconfirmed',
  'closed',
]);

/** What the checks read of a provider: its request log and its jobs (a simulator, or a view of one). */
export type ProviderRecords = Pick<Simulator, 'requests' | 'jobs' | 'jobsByToken'>;

/** Where the truth is read from. */
export interface VerifyContext {
  store: OperationStore;
  artifacts: ArtifactStore;
  sims: Record<Dialect, ProviderRecords>;
}

/** The outcome's key in a report: the local state, or `escalated:<reason>`. */
export function outcomeKey(summary: OperationSummary): string {
  return summary.escalation ? `escalated:${summary.escalation.reason}` : summary.localState;
}

/** The operation's record as the store holds it, or undefined when there is none. */
async function storedRecord(ctx: VerifyContext, operationId: string): Promise<OperationRecord | undefined> {
  return (await ctx.store.getOperation(operationId))?.record as unknown as OperationRecord | undefined;
}

/** Checks one ended operation against the provider's and the store's records. */
export async function verifyOperation(
  ctx: VerifyContext,
  op: PlannedOperation,
  summary: OperationSummary,
): Promise<LoadViolation[]> {
  const operationId = op.request.operationId;
  const violations: LoadViolation[] = [];
  const add = (kind: LoadViolation['kind'], detail: string): void =>
    void violations.push({ operationId, kind, detail });
  if (!FINAL_STATES.has(summary.localState)) add('not_final', `ended in ${summary.localState}`);
  if (summary.escalation && !BOUNDED_ESCALATIONS.has(summary.escalation.reason))
    add('unbounded_escalation', summary.escalation.reason);
  const record = await storedRecord(ctx, operationId);
  if (record === undefined) {
    add('error', 'no record in the store');
    return violations;
  }
  const jobs = ctx.sims[op.dialect].jobsByToken(record.idempotencyToken);
  if (jobs.length > 1) add('duplicate_job', `${jobs.length} provider jobs under one token`);
  if (summary.localState === 'succeeded') {
    const expected = renderPayload(op.result).sha256Hex;
    const stored = await ctx.store.artifacts(operationId);
    if (stored.length !== 1) add('lost_result', `${stored.length} artifacts for a succeeded operation`);
    for (const artifact of stored) {
      const actual = (await digestOf(await ctx.artifacts.open(artifact.location))).sha256;
      if (artifact.validation !== 'valid' || artifact.sha256 !== expected || actual !== expected)
        add(
          'bad_artifact',
          `validation ${artifact.validation}, recorded ${artifact.sha256}, bytes ${actual}, served ${expected}`,
        );
    }
  } else if (jobs.some((job) => job.state === 'succeeded') && !summary.escalation) {
    add(
      'lost_result',
      `the provider job succeeded but the operation ended ${summary.localState} without an escalation`,
    );
  }
  return violations;
}

/**
 * Whether a reviewed operation that ended without its escalation lost the review to the chaos, as the rules allow:
 * its provider answered {@link REVIEW_STATE} to a status read (the job went through that state), but no journal
 * entry records that answer (its worker or the database went down between the answer and its record), so the
 * operation read the job again and found it further on. If the answer was recorded, the operation had to escalate.
 */
export async function reviewLostBeforeRecord(ctx: VerifyContext, op: PlannedOperation): Promise<boolean> {
  const operationId = op.request.operationId;
  const record = await storedRecord(ctx, operationId);
  if (record === undefined) return false;
  const served = ctx.sims[op.dialect]
    .jobsByToken(record.idempotencyToken)
    .some((job) => job.history.some((change) => change.state === REVIEW_STATE));
  const recorded = (await ctx.store.entries(operationId)).some(
    ({ entry }) => entry.body.kind === 'observation' && entry.body.remoteState === REVIEW_STATE,
  );
  return served && !recorded;
}

/** An operation that did not end succeeded: its outcome, the faults planned into its script, and why. */
export interface UnusualOutcome {
  operationId: string;
  outcome: string;
  faults: string[];
  detail: string;
}

/** Explains an operation that did not succeed from its escalation text or its last journal entry. */
export async function unusualOutcome(
  client: AsyncJobClient,
  op: PlannedOperation,
  summary: OperationSummary,
): Promise<UnusualOutcome | undefined> {
  if (summary.localState === 'succeeded') return undefined;
  const operationId = op.request.operationId;
  const last = (await client.history(operationId)).at(-1);
  const text = (summary.escalation?.text ?? `${last?.body.cause ?? ''} ${last?.body.reason ?? ''}`).replace(
    /\s+/g,
    ' ',
  );
  const stopped = text.indexOf('Stopped because');
  const detail = (stopped >= 0 ? text.slice(stopped) : text).slice(0, 300);
  return { operationId, outcome: outcomeKey(summary), faults: op.faults, detail };
}

/** What the providers saw over the whole run. */
export interface ProviderTotals {
  /** Provider requests received, all simulators together. */
  requests: number;
  /** Faults the simulators actually applied, by `action:label`. */
  faultsApplied: Record<string, number>;
  /** Largest number of provider jobs under one idempotency token (must be <= 1). */
  maxJobsPerToken: number;
}

export function providerTotals(sims: Record<Dialect, ProviderRecords>): ProviderTotals {
  const tokens = new Map<string, number>();
  const faultsApplied: Record<string, number> = {};
  let requests = 0;
  for (const sim of Object.values(sims)) {
    for (const job of sim.jobs())
      if (job.idempotencyKey) tokens.set(job.idempotencyKey, (tokens.get(job.idempotencyKey) ?? 0) + 1);
    for (const request of sim.requests()) {
      if (request.action === 'sim') continue;
      requests++;
      if (request.fault) {
        const key = `${request.action}:${request.fault}`;
        faultsApplied[key] = (faultsApplied[key] ?? 0) + 1;
      }
    }
  }
  return { requests, faultsApplied, maxJobsPerToken: Math.max(0, ...tokens.values()) };
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  });
  await Promise.all(lanes);
  return results;
}

/** The `p`th percentile of ascending `sorted` (0 when empty). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Two aligned columns. */
export function formatRows(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([key]) => key.length));
  return rows.map(([key, value]) => `${key.padEnd(width)}  ${value}`);
}
