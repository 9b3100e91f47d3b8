/**
 * The `pollStatus` activity (P4, B2, W1): status reads in one heartbeating activity while the planned wait between
 * them is short, so frequent polls cost no workflow task, timer or activity each. It begins with the read the
 * workflow reserved, or with the short wait the workflow handed it; every further read is reserved and stored
 * before it is sent
 * (`store.putReservation`, guarded by the snapshot's version), and each answer is recorded with the core's
 * decision before the next wait, exactly as the one-read activity does. The operation goes back to the workflow
 * when `nextLoopStep` says so (the job leaves polling, a long wait, the loop's time spent, a moved state due for the
 * workflow's copy, P8), when the workflow cancels the
 * activity or wakes it (a message arrived, `loop-wake.ts`: in this process, or relayed from another worker on a
 * PostgreSQL store), or when another writer moved it on; in
 * a retry-driven wait, a long wait ends the attempt instead and the next attempt reads (`retry-wait.ts`). A read
 * that sees success is followed by the collect in the same activity. A
 * worker killed mid-loop loses nothing: the store holds every observation and reservation, and the workflow plans
 * again from it.
 */
import { Context } from '@temporalio/activity';
import { type RegisteredProvider } from '../adapters/providers/registry';
import { type OperationRecord } from '../core/operation';
import {
  isPolling,
  nextLoopStep,
  pendingReadDetails,
  pollLoopLimitsSchema,
  readNowForWebhook,
  retryDelayAfter,
  webhookMovesReadToNow,
  type LoopExit,
  type PollLoopLimits,
} from '../core/poll-loop';
import { afterActivityFailure, NOTHING_SENT_FAILURE_TYPE, onWake, type StepEntry, type StepResult } from '../core/step';
import { tailEntries, withoutTails, type StepOutcome } from '../core/step-outcome';
import { AsyncJobError } from '../core/errors';
import { issueText } from '../core/issues';
import { collectResult } from './collect-result';
import { whileHeartbeating } from './heartbeat';
import { onStatusLoopWake, type LoopWake } from './loop-wake';
import { alreadyRecorded, commitStep, parseInputRecord, snapshotOf, storedOutcome } from './journal-writer';
import { stepContext, type ActivityContext } from './provider-call';
import { sendStatusRead } from './read-status';
import { toFailure } from './to-failure';
import { resumeAttempt, waitAsRetry } from './retry-wait';
import type { ProviderCallInput } from './types';

/** Input of `pollStatus`: a provider call with the loop's limits (`statusActivityLimits`). */
export interface PollStatusInput extends ProviderCallInput {
  loop: PollLoopLimits;
  /** Waits longer than the loop keeps are retries of this activity (`retry-wait.ts`), not a return to the workflow. */
  retryWaits?: boolean;
}

/** The store's refusal of an entry at a sequence another writer recorded first. */
const JOURNAL_CONFLICT = 'ASYNCJOB_ERR_JOURNAL_CONFLICT';

/** What ended a wait between two reads: its time, a wake in this process, or Temporal's cancellation. */
type WaitEnd = 'due' | LoopWake | 'cancelled';

function currentContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

function parseRetryWaits(value: unknown): boolean {
  if (value === undefined || typeof value === 'boolean') return value === true;
  throw new AsyncJobError('ASYNCJOB_ERR_INVALID_INPUT', 'retryWaits: expected a boolean');
}

/** The loop's limits as given in an activity's input (`loop`), or a typed refusal naming the bad field. */
export function parseLimits(value: unknown): PollLoopLimits {
  const parsed = pollLoopLimitsSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const named = parsed.error.issues.map((issue) => ({ ...issue, path: ['loop', ...issue.path] }));
  throw new AsyncJobError('ASYNCJOB_ERR_INVALID_INPUT', issueText(named));
}

/** One loop over one operation: the state as stored, the entries recorded so far, and how to wait. */
class StatusLoop {
  readonly entries: StepEntry[] = [];
  private readonly context = currentContext();
  private readonly startedAtMs: number;
  exit: LoopExit | undefined;
  /** The workflow asked for the operation back through this process (`loop-wake.ts`), before Temporal's cancellation. */
  private messaged = false;
  /** Ends the current wait early; set only while waiting. */
  private endWait: ((wake: LoopWake) => void) | undefined;

  constructor(
    private readonly ctx: ActivityContext,
    private readonly provider: RegisteredProvider,
    public state: OperationRecord,
  ) {
    this.startedAtMs = ctx.clock();
  }

  /**
   * Records a step with its snapshot; a newer stored state, or a different entry another writer recorded first at
   * its sequence, means another writer took the operation over: its state stands.
   */
  async commit(step: StepResult): Promise<void> {
    let outcome: StepOutcome;
    try {
      outcome = await commitStep(this.ctx.store, step.record, step.entries, this.ctx.clock());
    } catch (error) {
      if (toFailure(error).type !== JOURNAL_CONFLICT) throw error;
      return this.takeStoredState();
    }
    if (outcome.state.journal.nextSequence !== step.record.journal.nextSequence) this.exit = 'superseded';
    this.state = outcome.state;
    this.entries.push(...step.entries);
  }

  /** A wake in this process: a message ends the loop at its next step (or its wait at once), a webhook ends a wait. */
  readonly woken = (wake: LoopWake): void => {
    if (wake === 'message') this.messaged = true;
    this.endWait?.(wake);
  };

  /** Whether the workflow asked for the operation back, through this process or through Temporal. */
  private askedBack(): boolean {
    return this.messaged || this.context?.cancellationSignal.aborted === true;
  }

  /** Takes the operation up from the store in an attempt after the first (`retry-wait.ts`). */
  async resume(held: OperationRecord, random: number): Promise<void> {
    const resumed = await resumeAttempt(this.ctx, held, stepContext(this.ctx, this.provider, random));
    this.state = resumed.state;
    this.entries.push(...resumed.entries);
    if (resumed.lostRead !== undefined) await this.commit(resumed.lostRead);
  }

  /** Reads with the reservation `record` holds, and records the answer. */
  async read(record: OperationRecord, random: number): Promise<void> {
    const step = stepContext(this.ctx, this.provider, random);
    await this.commit(await sendStatusRead(this.ctx, record, this.provider, step));
  }

  /** Runs until the operation goes back to the workflow; the first read has been made. */
  async loop(limits: PollLoopLimits, entered: OperationRecord): Promise<void> {
    const copiedAtMs = this.context?.info.scheduledTimestampMs;
    const loop = { startedAtMs: this.startedAtMs, entered, ...(copiedAtMs !== undefined ? { copiedAtMs } : {}) };
    while (this.exit === undefined) {
      if (this.askedBack()) return void (this.exit = 'cancelled');
      const next = nextLoopStep(this.state, this.ctx.clock(), loop, limits);
      if (next.kind === 'exit') return void (this.exit = next.reason);
      if (next.kind === 'wait') {
        const ended = await this.waitUntil(next.untilMs);
        if (ended === 'cancelled' || ended === 'message') return void (this.exit = 'cancelled');
        if (ended === 'webhook' && webhookMovesReadToNow(this.state, this.ctx.clock()))
          this.state = readNowForWebhook(this.state, this.ctx.clock());
        continue;
      }
      await this.wakeAndRead();
    }
  }

  /** The wake-up check (P5, S3, S4), then, when a read is due, its reservation stored before it is sent (B2). */
  private async wakeAndRead(): Promise<void> {
    if (this.askedBack()) return void (this.exit = 'cancelled');
    const random = Math.random();
    const woke = onWake(this.state, stepContext(this.ctx, this.provider, random));
    if (woke.kind === 'stopped') return this.commit(woke.step);
    if (woke.kind === 'not_yet') return void (this.exit = 'state_changed');
    const reserved = snapshotOf(withoutTails(woke.record), this.ctx.clock());
    if (!(await this.ctx.store.putReservation(reserved))) return void (this.exit = 'superseded');
    await this.read(woke.record, random);
  }

  /** Waits until `untilMs`, heartbeating with the position; ends early on a cancel or a wake in this process. */
  private waitUntil(untilMs: number): Promise<WaitEnd> {
    const signal = this.context?.cancellationSignal;
    const position = () => pendingReadDetails(this.state, untilMs);
    return whileHeartbeating(
      () =>
        new Promise<WaitEnd>((resolve) => {
          if (signal?.aborted) return resolve('cancelled');
          const end = (reason: WaitEnd) => {
            clearTimeout(timer);
            this.endWait = undefined;
            signal?.removeEventListener('abort', onAbort);
            resolve(reason);
          };
          const onAbort = () => end('cancelled');
          const timer = setTimeout(() => end('due'), Math.max(0, untilMs - this.ctx.clock()));
          this.endWait = end;
          signal?.addEventListener('abort', onAbort);
        }),
      this.context === undefined ? {} : { context: this.context, details: position },
    );
  }

  /**
   * A read saw success: the result is collected here, as the `collectResult` activity would (its own idempotent
   * step, recorded with its snapshot), so no workflow turn, activity or search-attribute write comes between the
   * read and the collect. A retryable failure of ours is recorded as the workflow records that activity's failure
   * (a transport failure counted, the collect planned again, S5), never retried blindly by Temporal; a final one is
   * thrown, as that activity's would be.
   */
  async collect(): Promise<void> {
    try {
      const collected = await collectResult(this.ctx)({ state: withoutTails(this.state), random: Math.random() });
      this.state = collected.state;
      this.entries.push(...collected.entries);
    } catch (error) {
      const failure = toFailure(error);
      if (failure.type === JOURNAL_CONFLICT) return this.takeStoredState();
      if (failure.nonRetryable) throw failure;
      this.ctx.logger.warn('collect activity failed; planned again', {
        operationId: this.state.operationId,
        error: failure.message,
      });
      const step = stepContext(this.ctx, this.provider, Math.random());
      const sent = failure.type === NOTHING_SENT_FAILURE_TYPE ? 'nothing' : 'maybe';
      await this.commit(afterActivityFailure(this.state, 'collect', failure.message, step, sent));
    }
  }

  /**
   * Another writer recorded this step first (an attempt that was timed out and replaced, still running on a cut-off
   * worker, read or collected too): the store's state stands, and the operation goes back with it.
   */
  private async takeStoredState(): Promise<void> {
    const stored = await storedOutcome(this.ctx.store, this.state.operationId, this.state.journal.nextSequence);
    this.ctx.logger.info('another writer recorded this step first; the stored state stands', {
      operationId: this.state.operationId,
    });
    this.state = stored.state;
    this.entries.push(...stored.entries);
    this.exit = 'superseded';
  }

  /** What the activity returns: the state as stored, and the loop's entries the tails keep. */
  outcome(): StepOutcome {
    return { state: withoutTails(this.state), entries: tailEntries(this.entries) };
  }
}

/**
 * Runs `loop` until the operation goes back to the workflow, listening for wakes meanwhile; `first` makes the loop's
 * first step (a reserved read, a resumed attempt), if any.
 */
async function holdUntilHandedBack(
  loop: StatusLoop,
  limits: PollLoopLimits,
  entered: OperationRecord,
  first?: () => Promise<void>,
): Promise<void> {
  const stopListening = onStatusLoopWake(
    entered.operationId,
    loop.woken,
    currentContext()?.info.currentAttemptScheduledTimestampMs,
  );
  try {
    await first?.();
    await loop.loop(limits, entered);
  } finally {
    stopListening();
  }
}

/** The status reads the loop made, for its log line. */
function readsOf(loop: StatusLoop): number {
  return loop.entries.filter((entry) => entry.body.kind === 'observation' && entry.body.action === 'status').length;
}

/**
 * After a create that left the job polled, in the create's own activity: the status reads due within `limits`
 * (`readOnAfterCreateLimits`: a short time), each reserved and recorded as the status loop records them, then the
 * collect when one saw success; a message, a long wait or the time spent hands the operation back. A create answered
 * with the finished job (C3) is collected at once. Nothing more when the create left neither (a failure, an
 * escalation, a create to reconcile). `entered`: the record the workflow holds, from before the create.
 */
export async function readOnAfterCreate(
  ctx: ActivityContext,
  created: StepOutcome,
  limits: PollLoopLimits,
  entered: OperationRecord,
): Promise<StepOutcome> {
  const collecting = created.state.localState === 'result_collecting';
  if (!isPolling(created.state) && !collecting) return created;
  const loop = new StatusLoop(ctx, ctx.providers.get(created.state.provider), created.state);
  loop.entries.push(...created.entries);
  if (!collecting) {
    await holdUntilHandedBack(loop, limits, entered);
    ctx.logger.info('create read on', {
      operationId: entered.operationId,
      provider: entered.provider,
      reads: readsOf(loop),
      reason: loop.exit,
    });
  }
  if (loop.state.localState === 'result_collecting' && (collecting || loop.exit === 'state_changed'))
    await loop.collect();
  return loop.outcome();
}

/** Makes the activity. */
export function pollStatus(ctx: ActivityContext) {
  return async (input: PollStatusInput): Promise<StepOutcome> => {
    const limits = parseLimits(input.loop);
    const retryWaits = parseRetryWaits(input.retryWaits);
    const held = parseInputRecord(input.state);
    const provider = ctx.providers.get(held.provider);
    const resuming = retryWaits && (currentContext()?.info.attempt ?? 1) > 1;
    const recorded = resuming ? undefined : await alreadyRecorded(ctx.store, held);
    if (recorded !== undefined) {
      ctx.logger.info('status already recorded: nothing sent', { operationId: held.operationId });
      return recorded;
    }
    const loop = new StatusLoop(ctx, provider, held);
    // A reservation the workflow made is read first, with its random draw (the jitter history holds); without
    // one, the loop begins with the wait the workflow handed it. A later attempt begins where the store stands.
    await holdUntilHandedBack(loop, limits, held, async () => {
      if (resuming) await loop.resume(held, input.random);
      else if (held.schedule.reservedAtMs !== undefined) await loop.read(held, input.random);
    });
    const retryInMs = retryWaits ? retryDelayAfter(loop.exit!, loop.state, ctx.clock()) : undefined;
    ctx.logger.info(retryInMs === undefined ? 'status loop handed back' : 'status loop waits as a retry', {
      operationId: held.operationId,
      provider: held.provider,
      reads: readsOf(loop),
      reason: loop.exit,
      ...(retryInMs !== undefined ? { retryInMs } : {}),
    });
    if (retryInMs !== undefined) throw waitAsRetry(retryInMs, loop.state, ctx.clock());
    if (loop.exit === 'state_changed' && loop.state.localState === 'result_collecting') await loop.collect();
    return loop.outcome();
  };
}
