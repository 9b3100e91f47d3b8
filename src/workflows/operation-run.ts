/**
 * One run of an operation's workflow: the state it holds (the record, the provider's facts, the inbox) and the
 * loop that runs the next command until the operation is finished or the run continues as new. Every decision is
 * a pure function of `src/core`; this class schedules activities, waits on timers and handles messages.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import type { ProviderFacts } from '../activities/types';
import { waitSummary } from '../core/delay-sources';
import { NO_CAPABILITIES } from '../core/escalation';
import { issueText } from '../core/issues';
import { DEFAULT_HISTORY_EVENT_LIMIT, continuesAsNew } from '../core/loop-bounds';
import { startRecord, type OperationRecord, type OperationStart } from '../core/operation';
import { loopTakesWait, retryTakesWait } from '../core/poll-loop';
import {
  afterActivityFailure,
  decisionDeadlinePassed,
  NOTHING_SENT_FAILURE_TYPE,
  nextCommand,
  onWake,
  operationSummary,
  reserveCreateAttempt,
  type Command,
  type StepContext,
  type StepResult,
} from '../core/step';
import { foldOutcome, outcomeOfRecord, withoutTails, type StepOutcome } from '../core/step-outcome';
import { refuseVariables, settleVariables } from '../core/step-variables';
import { localDescribe, localDrawToken, localStore, providerActivities, providerCallOptions } from './activity-options';
import type { AsyncJobWorkflow } from './async-job-workflow';
import { handleMessage } from './message-steps';
import { MessageInbox } from './message-inbox';
import type { AsyncJobWorkflowInput, CarriedState, OperationSummary } from './messages';
import { ParentLink } from './parent-link';
import { createAndReadOn, pollInActivity } from './status-activity';
import { Publication } from './publication';
import { invalidInput, refusal } from './refusals';

const ACTOR = 'workflow';

/**
 * Older histories took every failed provider call for one that may have arrived: the marker keeps them replaying
 * so, should one hold a failure that says nothing was sent.
 */
const NOTHING_SENT_PATCH = 'asyncjob-nothing-sent';

/** The placeholder token of a record whose token the worker has not drawn yet: never recorded, never sent. */
const UNDRAWN_TOKEN = 'undrawn-idempotency-token';

/** What a provider call schedules: one activity, given the provider's activities and their options. */
type ProviderCall = (
  provider: ReturnType<typeof providerActivities>,
  options: ReturnType<typeof providerCallOptions>,
) => Promise<StepOutcome>;

/** The state of one run and its main loop. */
export class OperationRun {
  record: OperationRecord;
  facts: ProviderFacts | undefined;
  readonly inbox: MessageInbox;
  private readonly startedAtMs = Date.now();
  private readonly publication: Publication;
  private readonly parentLink: ParentLink;

  /** The record exists before the first await, so queries and messages work from the first workflow task. */
  constructor(
    private readonly input: AsyncJobWorkflowInput,
    private readonly carried?: CarriedState,
  ) {
    this.record = carried?.record ?? this.newRecord();
    this.facts = carried?.provider;
    this.inbox = new MessageInbox(carried?.pending);
    this.publication = new Publication(this.record);
    this.parentLink = new ParentLink(this.record, carried !== undefined);
  }

  /**
   * The step context now. Validators pass a fixed random number: they are not replayed, so they must not draw from
   * the workflow's PRNG.
   */
  stepContext(random?: number): StepContext {
    return {
      nowMs: Date.now(),
      random: random ?? Math.random(),
      actor: ACTOR,
      capabilities: this.facts?.capabilities ?? NO_CAPABILITIES,
      reconciliation: this.facts?.reconciliation ?? 'none',
      ...(this.facts?.deciders !== undefined ? { deciders: this.facts.deciders } : {}),
    };
  }

  /** Refuses a message until the provider's facts are known (the first workflow task). */
  ensureReady(): void {
    if (!this.facts) throw refusal('ASYNCJOB_ERR_NOT_READY', 'the operation is starting; try again in a moment');
  }

  /** Appends the entries of a workflow-made step and adopts the state the store holds (ahead after a lost reply). */
  async commit(step: StepResult): Promise<void> {
    if (step.entries.length === 0) {
      this.record = step.record;
      return;
    }
    const returned = await localStore.appendJournal({ state: withoutTails(step.record), entries: step.entries });
    this.record = foldOutcome(step.record, returned);
  }

  /** Runs the operation to its end (or to continue-as-new). */
  async run(): Promise<OperationSummary> {
    const facts = await this.prepare();
    const historyLimit = this.input.historyEventLimit ?? DEFAULT_HISTORY_EVENT_LIMIT;
    for (;;) {
      await this.processMessages();
      this.publish();
      const info = workflowInfo();
      if (continuesAsNew(info.historyLength, info.continueAsNewSuggested, historyLimit)) {
        await this.settle();
        this.publish();
        await this.parentLink.sent();
        const carried: CarriedState = { record: this.record, provider: facts, pending: this.inbox.carried() };
        return continueAsNew<typeof AsyncJobWorkflow>(this.input, carried);
      }
      const now = Date.now();
      const summary = await this.execute(nextCommand(this.record, now, facts.reconciliation), now, facts);
      if (summary !== undefined) {
        await this.parentLink.sent();
        return summary;
      }
    }
  }

  /**
   * Reads the provider's facts and records the intent (C1), once per operation. The variables are checked against
   * the adapter's declarations before the intent (C5): the intent records them with defaults applied, or records
   * the operation and its refusal, and nothing is sent.
   */
  private async prepare(): Promise<ProviderFacts> {
    if (!this.facts) {
      // I1: a starter in workflow code could not draw the token; this worker does, before anything is recorded.
      const drawn =
        this.input.idempotencyToken === undefined
          ? await localDrawToken({ operationId: this.input.request.operationId })
          : undefined;
      const start = this.carried ? undefined : this.start(drawn);
      const { recorded, ...facts } = await localDescribe({
        provider: this.input.request.provider,
        ...(start !== undefined ? { start } : {}),
      });
      this.facts = facts;
      // The worker recorded the intent with the facts (one local activity); one of an earlier version, or an older
      // history, leaves it to `recordIntent` below.
      if (recorded !== undefined) {
        this.record = foldOutcome(this.record, recorded.outcome);
        if (recorded.variableIssues !== undefined)
          await this.commit(refuseVariables(this.record, recorded.variableIssues, this.stepContext()));
        return facts;
      }
      // The provider's tuning goes under the caller's overrides; nothing was recorded yet, so the record is remade.
      if ((this.facts.policy || drawn !== undefined) && !this.carried)
        this.record = this.newRecord(this.facts.policy, drawn);
    }
    if (!this.carried) {
      const settled = settleVariables(this.record, this.facts.variables, this.input.request.variables);
      if (settled.kind === 'ok') this.record = settled.record;
      this.record = foldOutcome(
        this.record,
        await localStore.recordIntent({
          ...outcomeOfRecord(this.record),
          ...(this.facts.deciders !== undefined ? { deciders: this.facts.deciders } : {}),
        }),
      );
      if (settled.kind === 'refused')
        await this.commit(refuseVariables(this.record, settled.issues, this.stepContext()));
    }
    return this.facts;
  }

  /** Runs one command; returns the summary when the operation is finished. */
  private async execute(command: Command, now: number, facts: ProviderFacts): Promise<OperationSummary | undefined> {
    const label = this.record.jobId ?? this.record.operationId;
    switch (command.kind) {
      case 'finished':
        await this.settle();
        this.publish();
        return operationSummary(this.record);
      case 'wait':
        return void (await this.wait(command.untilMs, now, facts, label));
      case 'await_decision':
        return this.awaitDecision(command.untilMs, now);
      case 'create':
        return void (await this.create(facts));
      case 'reconcile':
        return void (await this.reconcile(facts, command.reservesCreateAttempt));
      case 'read_status':
        return void (await this.readStatus(facts, now, label));
      case 'cancel':
        return void (await this.callProvider('cancel', facts, (provider, options) =>
          provider.requestCancel.executeWithOptions({ ...options, summary: `cancel ${label}` }, [this.callInput()]),
        ));
      case 'collect':
        return void (await this.callProvider('collect', facts, (provider, options) =>
          provider.collectResult.executeWithOptions({ ...options, summary: `collect ${label}` }, [this.callInput()]),
        ));
    }
  }

  /** Shows the record: to operators (search attributes, details) and, when it has one, to the parent (N3). */
  private publish(): void {
    this.publication.publish(this.record);
    this.parentLink.follow(this.record);
  }

  /**
   * Waits for the next command: a short wait before a status read in the status loop, a long one as retries of the
   * status activity (`retryTakesWait`), any other on a durable timer.
   */
  private async wait(untilMs: number, now: number, facts: ProviderFacts, label: string): Promise<void> {
    // The facts decide (recorded in history by describeProvider, carried across continue-as-new): an operation
    // started before retry waits, or on a worker with the loop off, keeps its durable timers.
    const limits = facts.pollLoop;
    if (limits !== undefined && loopTakesWait(this.record, now, limits))
      return pollInActivity(this, facts, `status ${label} (next read in a loop)`);
    if (limits !== undefined && retryTakesWait(this.record, now, limits))
      return pollInActivity(this, facts, `status ${label} (reads as retries)`);
    await this.sleepUntil(untilMs, now);
  }

  /** Sleeps until `untilMs`, or until a message arrives. */
  async sleepUntil(untilMs: number, now: number): Promise<void> {
    const summary = waitSummary(this.record.localState, this.record.schedule.delaySource);
    await condition(() => this.inbox.hasPending(), Math.max(1, untilMs - now), { summary });
  }

  /** Waits for a decision until its deadline; past it, the operation closes as escalated (E2). */
  private async awaitDecision(untilMs: number, now: number): Promise<OperationSummary | undefined> {
    if (now < untilMs) {
      await condition(() => this.inbox.hasPending(), untilMs - now, { summary: 'decision deadline' });
      return undefined;
    }
    await this.commit(decisionDeadlinePassed(this.record, this.stepContext()));
    await this.settle();
    return this.record.localState === 'escalated' ? operationSummary(this.record) : undefined;
  }

  private async create(facts: ProviderFacts): Promise<void> {
    if (!(await this.reserveCreateAttempt())) return;
    const summary = `create (attempt ${this.record.used.createAttempts})`;
    // The facts decide (recorded in history by describeProvider, carried across continue-as-new): an operation
    // started before the create read on, or on a worker with the loop off, makes the create alone.
    if (facts.pollLoop?.createReadsOn === true && facts.pollLoop.maxWaitMs > 0)
      return createAndReadOn(this, facts, summary);
    await this.callProvider('create', facts, (provider, options) =>
      provider.createJob.executeWithOptions({ ...options, summary }, [this.startedCallInput()]),
    );
  }

  private async reconcile(facts: ProviderFacts, reservesCreateAttempt: boolean): Promise<void> {
    if (reservesCreateAttempt && !(await this.reserveCreateAttempt())) return;
    const summary = `reconcile ${this.record.operationId}`;
    await this.callProvider('reconcile', facts, (provider, options) =>
      provider.reconcileJob.executeWithOptions({ ...options, summary }, [this.startedCallInput()]),
    );
  }

  /** Reserves and counts a create attempt (B2, I3); false when the budget or deadline stopped it (recorded). */
  private async reserveCreateAttempt(): Promise<boolean> {
    const reserved = reserveCreateAttempt(this.record, this.stepContext());
    if (reserved.kind === 'stopped') {
      await this.commit(reserved.step);
      return false;
    }
    this.record = reserved.record;
    return true;
  }

  private async readStatus(facts: ProviderFacts, now: number, label: string): Promise<void> {
    const woke = onWake(this.record, this.stepContext());
    if (woke.kind === 'stopped') return this.commit(woke.step);
    if (woke.kind === 'not_yet') return this.sleepUntil(woke.atMs, now);
    this.record = woke.record;
    const { statusRequests } = woke.record.used;
    const summary = `status ${label} (${statusRequests} of ${woke.record.budgets.maxStatusRequests})`;
    // The facts decide (recorded in history by describeProvider, carried across continue-as-new): a worker with the
    // loop off (ASYNCJOB_POLL_LOOP_MAX_WAIT_MS=0) gives no poll loop, one activity per read.
    if (facts.pollLoop !== undefined && facts.pollLoop.maxWaitMs > 0) return pollInActivity(this, facts, summary);
    await this.callProvider('status', facts, (provider, options) =>
      provider.readStatus.executeWithOptions({ ...options, summary }, [this.callInput()]),
    );
  }

  /** What the calls that send the start request receive: the payload and the variables as given (I2). */
  startedCallInput() {
    const { payload, variables } = this.input.request;
    return { ...this.callInput(), payload, ...(variables !== undefined ? { variables } : {}) };
  }

  /** What a provider call receives: the operation state without its journal tails, and a random draw. */
  callInput() {
    return { state: withoutTails(this.record), random: Math.random() };
  }

  /** Runs one provider call; a failure of ours is planned again, never retried blindly (B2). */
  private async callProvider(action: string, facts: ProviderFacts, call: ProviderCall): Promise<void> {
    const options = providerCallOptions(facts);
    try {
      this.record = foldOutcome(this.record, await call(providerActivities(options), options));
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      await this.callFailed(action, err);
    }
  }

  /** Records a provider call's failure of ours, to be planned again (B2); a final one ends the workflow. */
  async callFailed(action: string, err: ActivityFailure): Promise<void> {
    const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
    if (cause?.nonRetryable) throw cause;
    const message = String(err.cause?.message ?? err.message);
    log.warn(`${action} activity failed; planned again`, { error: message });
    const sent = cause?.type === NOTHING_SENT_FAILURE_TYPE && patched(NOTHING_SENT_PATCH) ? 'nothing' : 'maybe';
    await this.commit(afterActivityFailure(this.record, action, message, this.stepContext(), sent));
  }

  /** Handles every queued message, in arrival order. */
  private async processMessages(): Promise<void> {
    this.inbox.releaseHeld();
    for (let message = this.inbox.take(); message !== undefined; message = this.inbox.take()) {
      await handleMessage(this, message);
    }
  }

  /** Answers every queued message and waits for running handlers, so no update is left without an answer. */
  private async settle(): Promise<void> {
    for (;;) {
      await this.processMessages();
      if (allHandlersFinished() && !this.inbox.hasPending()) return;
      await condition(() => allHandlersFinished() || this.inbox.hasPending());
    }
  }

  /**
   * The record as the input makes it. Until a token the worker draws replaces it (`prepare`, before anything is
   * recorded or sent, and before any message is accepted: `ensureReady`), a record without one holds
   * {@link UNDRAWN_TOKEN}.
   */
  private newRecord(providerPolicy?: ProviderFacts['policy'], drawnToken?: string): OperationRecord {
    const made = startRecord(this.start(drawnToken), providerPolicy);
    if (made.kind === 'refused') throw invalidInput(issueText(made.issues, '(request)'));
    return made.record;
  }

  /** The start this run's record is made from: the input's request, trace and token (drawn by the worker when absent). */
  private start(drawnToken?: string): OperationStart {
    const { request, traceId } = this.input;
    const idempotencyToken = drawnToken ?? this.input.idempotencyToken ?? UNDRAWN_TOKEN;
    return { request, startedAtMs: this.startedAtMs, idempotencyToken, traceId };
  }
}
