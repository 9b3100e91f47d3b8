/**
 * The job lifecycle engine: jobs created from scripts, advanced lazily (on every read, so no timers are needed)
 * by elapsed milliseconds or by counted status reads, cancellation, expiry, and the idempotency index
 * (token -> jobs, client reference -> jobs). Every lookup is O(1).
 */
import type { JobScript } from './scenario';
import type { SeededRandom } from './random';

/** Neutral states that end a job. */
export const TERMINAL_STATES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled', 'expired']);

/** A state the job entered, with when (simulator clock). */
export interface StateChange {
  state: string;
  atMs: number;
}

/** One simulated provider job. Mutated only by {@link JobStore}. */
export interface SimJob {
  /** The raw ID (the dialect adds its public form). */
  id: string;
  /** The idempotency token it was created under, if any. */
  token?: string;
  /** Canonical JSON of the create body (the provider-side fingerprint). */
  fingerprint: string;
  payload: unknown;
  clientReference?: string;
  scriptName: string;
  script: JobScript;
  /** Each step's duration, resolved at create (seeded random for ranges); undefined for poll-based or last. */
  durationsMs: (number | undefined)[];
  createdAtMs: number;
  stepIndex: number;
  stepEnteredAtMs: number;
  pollsInStep: number;
  statusReads: number;
  /** The state forced by a resolved cancel or an expiry (overrides the step's state). */
  stateOverride?: string;
  cancel?: { requestedAtMs: number; outcome: 'cancelled' | 'succeeded' };
  updatedAtMs: number;
  history: StateChange[];
}

/** The outcome of a cancel request. */
export type CancelOutcome = { kind: 'accepted'; repeated: boolean } | { kind: 'already_terminal'; state: string };

/** Creates, finds and advances jobs. */
export class JobStore {
  private readonly byId = new Map<string, SimJob>();
  private readonly byToken = new Map<string, SimJob[]>();
  private readonly byClientReference = new Map<string, SimJob[]>();

  constructor(
    private readonly random: () => SeededRandom,
    private readonly onStateEntered: (job: SimJob, change: StateChange) => void,
  ) {}

  /** Creates a job (always a new one; idempotency is the caller's decision). */
  create(input: {
    id: string;
    token?: string;
    fingerprint: string;
    payload: unknown;
    scriptName: string;
    script: JobScript;
    nowMs: number;
  }): SimJob {
    const rnd = this.random();
    const durationsMs = input.script.steps.map((s) =>
      s.durationMs === undefined
        ? undefined
        : typeof s.durationMs === 'number'
          ? s.durationMs
          : rnd.intBetween(s.durationMs.min, s.durationMs.max),
    );
    const ref = readClientReference(input.payload);
    const first = input.script.steps[0]!.state;
    const job: SimJob = {
      id: input.id,
      token: input.token,
      fingerprint: input.fingerprint,
      payload: input.payload,
      clientReference: ref,
      scriptName: input.scriptName,
      script: input.script,
      durationsMs,
      createdAtMs: input.nowMs,
      stepIndex: 0,
      stepEnteredAtMs: input.nowMs,
      pollsInStep: 0,
      statusReads: 0,
      updatedAtMs: input.nowMs,
      history: [{ state: first, atMs: input.nowMs }],
    };
    if (input.script.sync) {
      const done = input.script.steps.findIndex((s) => TERMINAL_STATES.has(s.state));
      job.stepIndex = done === -1 ? input.script.steps.length - 1 : done;
      job.history = [{ state: job.script.steps[job.stepIndex]!.state, atMs: input.nowMs }];
    }
    this.byId.set(job.id, job);
    if (input.token !== undefined) push(this.byToken, input.token, job);
    if (ref !== undefined) push(this.byClientReference, ref, job);
    this.onStateEntered(job, job.history[0]!);
    return job;
  }

  /** The job with this raw ID. O(1). */
  get(id: string): SimJob | undefined {
    return this.byId.get(id);
  }

  /** Every job created under this token, oldest first. */
  byIdempotencyToken(token: string): readonly SimJob[] {
    return this.byToken.get(token) ?? [];
  }

  /** Every job whose create payload had this `client_reference`, oldest first. */
  byReference(reference: string): readonly SimJob[] {
    return this.byClientReference.get(reference) ?? [];
  }

  /** All jobs, oldest first. */
  all(): SimJob[] {
    return [...this.byId.values()];
  }

  /** The number of jobs created. */
  count(): number {
    return this.byId.size;
  }

  /** Forgets every job. */
  clear(): void {
    this.byId.clear();
    this.byToken.clear();
    this.byClientReference.clear();
  }

  /** The job's current neutral state. */
  state(job: SimJob): string {
    return job.stateOverride ?? job.script.steps[job.stepIndex]!.state;
  }

  /** Brings the job up to `nowMs` and returns its state. A status read first counts itself (poll-based steps). */
  advance(job: SimJob, nowMs: number, isStatusRead = false): string {
    for (;;) {
      const current = this.state(job);
      if (TERMINAL_STATES.has(current)) {
        if (current === 'succeeded' && job.stateOverride === undefined && job.script.expiresAfterMs !== undefined) {
          const expiresAt = job.createdAtMs + job.script.expiresAfterMs;
          if (nowMs >= expiresAt) this.enter(job, 'expired', expiresAt, true);
        }
        break;
      }
      const cancelAt = job.cancel ? job.cancel.requestedAtMs + job.script.cancel.afterMs : undefined;
      const last = job.stepIndex >= job.script.steps.length - 1;
      const duration = job.durationsMs[job.stepIndex];
      const step = job.script.steps[job.stepIndex]!;
      const stepEndsAt = !last && duration !== undefined ? job.stepEnteredAtMs + duration : undefined;
      const pollDone = !last && step.polls !== undefined && job.pollsInStep >= step.polls;
      if (
        cancelAt !== undefined &&
        cancelAt <= nowMs &&
        (stepEndsAt === undefined || cancelAt <= stepEndsAt) &&
        !pollDone
      ) {
        this.enter(job, job.cancel!.outcome, cancelAt, true);
        continue;
      }
      if (stepEndsAt !== undefined && stepEndsAt <= nowMs) {
        job.stepIndex += 1;
        job.stepEnteredAtMs = stepEndsAt;
        job.pollsInStep = 0;
        this.enter(job, this.state(job), stepEndsAt, false);
        continue;
      }
      if (pollDone) {
        job.stepIndex += 1;
        job.stepEnteredAtMs = nowMs;
        job.pollsInStep = 0;
        this.enter(job, this.state(job), nowMs, false);
        continue;
      }
      break;
    }
    if (isStatusRead) {
      job.statusReads += 1;
      job.pollsInStep += 1;
    }
    return this.state(job);
  }

  /** Milliseconds until the job's next time-based change, or undefined when none is scheduled. */
  msUntilNextChange(job: SimJob, nowMs: number): number | undefined {
    if (TERMINAL_STATES.has(this.state(job))) return undefined;
    const candidates: number[] = [];
    if (job.cancel) candidates.push(job.cancel.requestedAtMs + job.script.cancel.afterMs);
    const duration = job.durationsMs[job.stepIndex];
    if (duration !== undefined && job.stepIndex < job.script.steps.length - 1)
      candidates.push(job.stepEnteredAtMs + duration);
    if (candidates.length === 0) return undefined;
    return Math.max(0, Math.min(...candidates) - nowMs);
  }

  /** Requests cancellation. Idempotent while pending; `race` makes the job end `succeeded` instead (F3). */
  requestCancel(job: SimJob, nowMs: number, race: boolean): CancelOutcome {
    const state = this.advance(job, nowMs);
    if (TERMINAL_STATES.has(state)) return { kind: 'already_terminal', state };
    if (job.cancel) return { kind: 'accepted', repeated: true };
    job.cancel = { requestedAtMs: nowMs, outcome: race ? 'succeeded' : job.script.cancel.outcome };
    this.advance(job, nowMs);
    return { kind: 'accepted', repeated: false };
  }

  /** When the job's results expire, if its script says so. */
  expiresAtMs(job: SimJob): number | undefined {
    return job.script.expiresAfterMs === undefined ? undefined : job.createdAtMs + job.script.expiresAfterMs;
  }

  private enter(job: SimJob, state: string, atMs: number, override: boolean): void {
    if (override) job.stateOverride = state;
    job.updatedAtMs = atMs;
    const change = { state, atMs };
    job.history.push(change);
    this.onStateEntered(job, change);
  }
}

function push(map: Map<string, SimJob[]>, key: string, job: SimJob): void {
  const list = map.get(key);
  if (list) list.push(job);
  else map.set(key, [job]);
}

function readClientReference(payload: unknown): string | undefined {
  if (payload === null || typeof payload !== 'object') return undefined;
  const ref = (payload as Record<string, unknown>)['client_reference'];
  return typeof ref === 'string' ? ref : undefined;
}
