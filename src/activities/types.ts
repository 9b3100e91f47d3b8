/**
 * The activity interface the workflow schedules (imported by the workflow as types only). Each activity does
 * at most one outside action, records what it observed in the store in the same activity, and is idempotent:
 * entries are keyed by (operation ID, sequence) from the record the workflow passes, and an activity that finds
 * its sequence already recorded returns the recorded outcome instead of calling the provider again.
 */
import type { DeciderPolicyInForce } from '../core/decider-policy';
import type { AdapterCapabilities } from '../core/escalation';
import type { OperationRecord, OperationStart } from '../core/operation';
import type { OperationVariables, VariableDeclarations, VariableIssue } from '../core/operation-variables';
import type { PollPolicyInput } from '../core/policy';
import type { PollLoopLimits } from '../core/poll-loop';
import type { ReconciliationMethod, StepEntry } from '../core/step';
import type { StepOutcome } from '../core/step-outcome';

/** What the workflow needs to know about a provider, read once per run (no secrets). */
export interface ProviderFacts {
  name: string;
  capabilities: AdapterCapabilities;
  reconciliation: ReconciliationMethod;
  /** The provider's P2 tuning, applied under the caller's own overrides. */
  policy?: PollPolicyInput;
  /**
   * The provider's own activity task queue, for a provider whose calls run there (a rate-limited one); absent: its
   * calls run on the workflow's own task queue (F9).
   */
  taskQueue?: string;
  /** Status reads a short wait apart stay in one activity (`pollStatus`); absent: one activity per read. */
  pollLoop?: PollLoopLimits;
  /** The operation variables the adapter declares (C5); absent: it declares none. */
  variables?: VariableDeclarations;
  /** The decider policy this worker holds (D2): the operation keeps it, by its digest, from its start. */
  deciders?: DeciderPolicyInForce;
}

/**
 * The intent `describeProvider` recorded for the start it was given (C1): the state the store holds and its entries,
 * as `recordIntent` returns them, and the issues of the operation variables when the adapter refuses them (C5), which
 * the workflow then records as the operation's end before anything is sent.
 */
export interface RecordedStart {
  outcome: StepOutcome;
  variableIssues?: VariableIssue[];
}

/** Input of the activities that make one provider call. */
export interface ProviderCallInput {
  /** The operation state as the workflow holds it, including any reservation (B2), without journal tails. */
  state: OperationRecord;
  /** Uniform in [0, 1) from the workflow, so jitter is decided once and replayed (P2). */
  random: number;
}

/** Input of the calls that send the start request (create, reconcile): the payload and the variables as given. */
export type StartedCallInput = ProviderCallInput & {
  payload: Record<string, unknown>;
  /** The variables as the caller gave them (before defaults): with the payload, what the fingerprint covers (I2). */
  variables?: OperationVariables;
};

/** Input of `createJob`: the start request, and with `loop` the limits of the reads it makes after the create. */
export type CreateJobInput = StartedCallInput & { loop?: PollLoopLimits };

/** The activities of asyncjob. */
export interface AsyncJobActivities {
  /**
   * Facts about a provider (capabilities, reconciliation method); throws a non-retryable failure for an unknown
   * provider. Given the operation's `start`, it also makes its record under the provider's tuning, checks its
   * variables and records its intent as `recordIntent` does (`recorded`): one local activity where a worker of an
   * earlier version, which ignores `start`, leaves the intent to `recordIntent`.
   */
  describeProvider(input: {
    provider: string;
    start?: OperationStart;
  }): Promise<ProviderFacts & { recorded?: RecordedStart }>;
  /** I1: a fresh idempotency token, for an operation whose starter (a workflow) could not draw one. */
  drawIdempotencyToken(input: { operationId: string }): Promise<string>;
  /**
   * C1: writes the intent (sequence 1), the first transition and the snapshot before anything is sent. Refuses
   * (non-retryable `ASYNCJOB_ERR_FINGERPRINT_MISMATCH`) when the operation ID already holds another request (I2).
   * Returns the state the store now holds and its entries (the stored ones when the same request was already
   * recorded: a join).
   */
  recordIntent(input: {
    state: OperationRecord;
    entries: StepEntry[];
    deciders?: DeciderPolicyInForce;
  }): Promise<StepOutcome>;
  /**
   * Appends workflow-made entries (messages, wake-up checks) and the snapshot. Safe to repeat. Returns the state
   * the store now holds and the step's entries: the stored ones when different entries were already recorded at
   * those sequences (adopt them).
   */
  appendJournal(input: { state: OperationRecord; entries: StepEntry[] }): Promise<StepOutcome>;
  /**
   * Sends the create request (same token on every attempt, I3) and applies `afterCreate`; given `loop`, reads on
   * while the reads are due within it (`readOnAfterCreateLimits`), as `pollStatus` reads.
   */
  createJob(input: CreateJobInput): Promise<StepOutcome>;
  /** Reconciles an ambiguous create by the adapter's method (U2) and applies `afterReconcile`. */
  reconcileJob(input: StartedCallInput): Promise<StepOutcome>;
  /** Sends one status request and applies `afterStatus` (P1-P8, T3). */
  readStatus(input: ProviderCallInput): Promise<StepOutcome>;
  /**
   * Status reads while the planned wait between them is at most `loop.maxWaitMs` (P4, B2): the first with the
   * workflow's reservation, each further one reserved in the store before it is sent. Returns the state as stored
   * when the operation needs the workflow (see `core/poll-loop.ts`), also after the workflow cancelled it.
   */
  pollStatus(input: ProviderCallInput & { loop: PollLoopLimits }): Promise<StepOutcome>;
  /**
   * The state the store holds and its entries from `fromSequence` on: what the workflow adopts after a status
   * loop ended without returning (a worker lost mid-loop). Reads only.
   */
  readStoredState(input: { operationId: string; fromSequence: number }): Promise<StepOutcome>;
  /**
   * Asks a status loop of this operation to hand the operation back now (a message arrived): in this process, and on
   * a PostgreSQL store in every other worker (a NOTIFY). Run as a local activity, beside the loop's cancellation.
   * Answers how many loops were woken in this process; sends nothing to a provider and records nothing.
   */
  wakeStatusLoop(input: { operationId: string }): Promise<{ loopsWoken: number }>;
  /** Sends the one cancel request (X1) and applies `afterCancel`. */
  requestCancel(input: ProviderCallInput): Promise<StepOutcome>;
  /** Streams the result to artifact storage, validates it (R1-R4) and applies `afterCollect`. */
  collectResult(input: ProviderCallInput): Promise<StepOutcome>;
}
