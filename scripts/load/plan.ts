/**
 * The operations of a load run (`npm run soak`, `npm run test:cluster`): one simulator script per operation (a
 * short lifecycle, a unique result, faults on about `faultRate` of its provider calls, seeded), spread over the
 * three dialects; optionally a few operations a human must review (the provider reports a state the contract does
 * not know, so they escalate `unknown_state` and wait for a decision).
 */
import type { StartRequest } from '../../src/core/operation';
import { seededRandom, type SeededRandom } from '../../src/simulator/random';
import type { ResultPayload } from '../../src/simulator/scenario';

export const DIALECTS = ['rest', 'lro', 'operation-location'] as const;
export type Dialect = (typeof DIALECTS)[number];

/** The state a reviewed operation's provider reports once: no contract maps it, so the operation escalates. */
export const REVIEW_STATE = 'manual_review';

const FAULT_KINDS = ['http_503', 'http_429', 'drop', 'reset'] as const;

function faultOf(kind: (typeof FAULT_KINDS)[number], rnd: SeededRandom): Record<string, unknown> {
  switch (kind) {
    case 'http_503':
      return { kind: 'http_error', status: 503, ...(rnd.next() < 0.5 ? { retryAfterSeconds: 1 } : {}) };
    case 'http_429':
      return { kind: 'http_error', status: 429, ...(rnd.next() < 0.5 ? { retryAfterSeconds: 1 } : {}) };
    case 'drop':
      return { kind: 'drop' };
    case 'reset':
      return { kind: 'reset' };
  }
}

/** One operation of the run, with what its provider will serve. */
export interface PlannedOperation {
  request: StartRequest;
  dialect: Dialect;
  result: ResultPayload;
  /** The faults planned for it, e.g. `status#2:drop`. */
  faults: string[];
  /** Escalates for a human (`unknown_state`) before it can finish. */
  needsReview: boolean;
}

/** What {@link planLoad} needs. */
export interface PlanOptions {
  count: number;
  seed: number;
  faultRate: number;
  /** The provider (contract) name serving a dialect. */
  provider: (dialect: Dialect) => string;
  /** Makes operation IDs and results unique to the run. */
  runId: string;
  /** Operation IDs are `<idPrefix>-<runId>-<index>`. */
  idPrefix: string;
  createDeadlineMs: number;
  resultDeadlineMs: number;
  /** How many of the operations need a human review (default 0); spread evenly over the run. */
  reviews?: number;
  /** How long an escalation waits for its decision (default 1 s: unanswered ones close soon). */
  decisionDeadlineMs?: number;
}

/** The run's operations and the simulators' scripts (by dialect, then script name). */
export interface LoadPlan {
  scripts: Record<Dialect, Record<string, unknown>>;
  operations: PlannedOperation[];
  /** Faults planned into the scripts, by `action:kind`. */
  faultsPlanned: Record<string, number>;
}

/** Builds the run: scripts, start requests and the faults planned, the same for the same seed. */
export function planLoad(options: PlanOptions): LoadPlan {
  const rnd = seededRandom(options.seed);
  const scripts: LoadPlan['scripts'] = { rest: {}, lro: {}, 'operation-location': {} };
  const faultsPlanned: Record<string, number> = {};
  const operations: PlannedOperation[] = [];
  const reviews = Math.min(options.reviews ?? 0, options.count);
  const reviewEvery = reviews > 0 ? Math.floor(options.count / reviews) : 0;
  for (let index = 0; index < options.count; index++) {
    const dialect = DIALECTS[index % DIALECTS.length]!;
    const needsReview = reviewEvery > 0 && index % reviewEvery === 0 && index / reviewEvery < reviews;
    const queuedPolls = rnd.intBetween(0, 1);
    const runningPolls = rnd.intBetween(1, 3);
    const faults: Record<string, unknown>[] = [];
    const labels: string[] = [];
    const maybeFault = (on: string, nth: number): void => {
      if (rnd.next() >= options.faultRate) return;
      const kind = FAULT_KINDS[rnd.intBetween(0, FAULT_KINDS.length - 1)]!;
      faultsPlanned[`${on}:${kind}`] = (faultsPlanned[`${on}:${kind}`] ?? 0) + 1;
      faults.push({ on, nth, fault: faultOf(kind, rnd) });
      labels.push(`${on}#${nth}:${JSON.stringify(faults.at(-1)!.fault)}`);
    };
    maybeFault('create', 1);
    for (let nth = 1; nth <= queuedPolls + runningPolls + 1; nth++) maybeFault('status', nth);
    maybeFault('result', 1);
    const result: ResultPayload = {
      kind: 'json',
      body: {
        run: options.runId,
        operation: index,
        rows: Array.from({ length: 1 + (index % 5) }, (_, k) => ({ k, v: rnd.hex(8) })),
      },
    };
    const name = `${options.idPrefix}-${index}`;
    scripts[dialect][name] = {
      steps: [
        ...(queuedPolls > 0 ? [{ state: 'queued', polls: queuedPolls }] : []),
        { state: 'running', polls: runningPolls },
        // A state no contract maps: the operation escalates `unknown_state`; after an extension it reads on.
        ...(needsReview ? [{ state: REVIEW_STATE, polls: 1 }] : []),
        { state: 'succeeded' },
      ],
      result,
      // A reviewed operation's faults would make its path depend on timing; it has none.
      faults: needsReview ? [] : faults,
    };
    operations.push({
      dialect,
      result,
      faults: needsReview ? [] : labels,
      needsReview,
      request: {
        operationId: `${options.idPrefix}-${options.runId}-${index}`,
        provider: options.provider(dialect),
        payload: { report: options.idPrefix, index, scenario: name },
        startedBy: `service:${options.idPrefix}`,
        authorisedBy: `policy:${options.idPrefix}`,
        createDeadline: { afterMs: options.createDeadlineMs },
        resultDeadline: { afterMs: options.resultDeadlineMs },
        policy: {
          baseDelayMs: 50,
          maxDelayMs: 1_000,
          maxTransportFailures: 10,
          maxRateLimited: 5,
          notFoundWindowMs: 5_000,
          decisionDeadlineMs: needsReview ? options.resultDeadlineMs : (options.decisionDeadlineMs ?? 1_000),
        },
      },
    });
  }
  return { scripts, operations, faultsPlanned };
}
