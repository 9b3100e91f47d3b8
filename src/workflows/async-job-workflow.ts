/**
 * AsyncJobWorkflow: drives one operation (workflow ID = operation ID) from intent to a verified result.
 * Deterministic: imports only `src/core`, `@temporalio/workflow` (and `@temporalio/common` keys), and the
 * activity interface as types. Every decision is a pure function of `src/core`; this file schedules activities,
 * waits on timers, and takes messages (see README.md beside it).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  log,
  patched,
  setCurrentDetails,
  setHandler,
  allHandlersFinished,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ProviderFacts } from '../activities/types';
import { decideCommands } from '../core/decide-command';
import { waitSummary } from '../core/delay-sources';
import { renderEscalation, decisionSchema, NO_CAPABILITIES } from '../core/escalation';
import { issueText } from '../core/issues';
import { newOperationRecord, type OperationRecord } from '../core/operation';
import { adoptReturned, withoutTails } from '../core/record-tails';
import {
  afterActivityFailure,
  applyDecision,
  applyWebhookHint,
  decisionDeadlinePassed,
  nextCommand,
  onWake,
  operationSummary,
  recordRejectedDecision,
  requestCancel,
  reserveCreateAttempt,
  type StepContext,
  type StepResult,
} from '../core/step';
import {
  asyncJobWorkflowInputSchema,
  cancelRequestSchema,
  cancelSignal,
  cancelUpdate,
  decideSignal,
  decideUpdate,
  escalationQuery,
  historyQuery,
  stateQuery,
  webhookHintSchema,
  webhookSignal,
  type AsyncJobWorkflowInput,
  type CarriedState,
  type MessageAnswer,
  type OperationSummary,
  type PendingMessage,
} from './messages';
import {
  localDescribe,
  localStore,
  providerActivities,
  providerCallOptions,
  remoteDescribe,
  remoteStore,
} from './activity-options';
import { escalationReasonKey, providerJobIdKey, providerKey, resultDeadlineKey, stateKey } from './search-attributes';

const DEFAULT_HISTORY_EVENT_LIMIT = 5_000;

/** A pending message before it is given its arrival number. */
type PendingMessageBody = PendingMessage extends infer M ? (M extends PendingMessage ? Omit<M, 'id'> : never) : never;
const ACTOR = 'workflow';

function invalidInput(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'ASYNCJOB_ERR_INVALID_INPUT', message, nonRetryable: true });
}

/**
 * Runs one operation and returns its summary (state, job, result summary, escalation): never the result body.
 * `carried` is set only by continue-as-new.
 */
export async function AsyncJobWorkflow(
  rawInput: AsyncJobWorkflowInput,
  carried?: CarriedState,
): Promise<OperationSummary> {
  const parsed = asyncJobWorkflowInputSchema.safeParse(rawInput);
  if (!parsed.success) throw invalidInput(issueText(parsed.error.issues));
  const input = parsed.data;
  if (input.request.operationId !== workflowInfo().workflowId) {
    throw invalidInput(
      `the workflow ID ${workflowInfo().workflowId} must be the operation ID ${input.request.operationId}`,
    );
  }

  // The record exists before the first await, so queries and messages work from the first workflow task.
  const startedAtMs = Date.now();
  const makeRecord = (providerPolicy?: ProviderFacts['policy']): OperationRecord => {
    const request = providerPolicy
      ? { ...input.request, policy: { ...providerPolicy, ...(input.request.policy ?? {}) } }
      : input.request;
    const made = newOperationRecord({
      request,
      nowMs: startedAtMs,
      idempotencyToken: input.idempotencyToken,
      traceId: input.traceId,
    });
    if (made.kind === 'refused') throw invalidInput(made.issues.map((i) => `${i.path}: ${i.message}`).join('; '));
    return made.record;
  };
  let record: OperationRecord = carried?.record ?? makeRecord();
  let facts: ProviderFacts | undefined = carried?.provider;

  const local = input.storeCalls === 'local';
  const store = local ? localStore : remoteStore;
  const describeProvider = local ? localDescribe : remoteDescribe;
  const pending: PendingMessage[] = [...(carried?.pending ?? [])];
  const answers = new Map<number, MessageAnswer>();
  let nextMessageId = pending.reduce((max, m) => Math.max(max, m.id), 0) + 1;
  // Validators pass a fixed random number: they are not replayed, so they must not draw from the workflow's PRNG.
  const ctx = (random?: number): StepContext => ({
    nowMs: Date.now(),
    random: random ?? Math.random(),
    actor: ACTOR,
    capabilities: facts?.capabilities ?? NO_CAPABILITIES,
    reconciliation: facts?.reconciliation ?? 'none',
  });
  const ready = (): void => {
    if (!facts) throw new Error('ASYNCJOB_ERR_NOT_READY: the operation is starting; try again in a moment');
  };

  // Queries read the record; they never wait or change anything.
  setHandler(stateQuery, () => record);
  setHandler(escalationQuery, () =>
    record.escalation ? { ...record.escalation, text: renderEscalation(record.escalation) } : null,
  );
  setHandler(historyQuery, () => record.journal.transitions);

  // Messages are queued and handled by the main loop between outside calls, in arrival order.
  const enqueue = (message: PendingMessageBody): number => {
    const id = nextMessageId++;
    pending.push({ ...message, id } as PendingMessage);
    return id;
  };
  /**
   * Updates queue their message like signals and answer once the main loop has processed it. Shielded like the
   * loop: a Temporal cancellation request is a cancel message, not a reason to stop answering updates.
   */
  const answerOnceProcessed = (message: PendingMessageBody): Promise<MessageAnswer> =>
    CancellationScope.nonCancellable(async () => {
      const id = enqueue(message);
      await condition(() => answers.has(id));
      return answers.get(id)!;
    });
  setHandler(cancelSignal, (request) => {
    const checked = cancelRequestSchema.safeParse(request);
    if (!checked.success)
      return void log.warn('cancel signal refused: invalid input', { issues: issueText(checked.error.issues) });
    enqueue({ kind: 'cancel', request: checked.data });
  });
  setHandler(decideSignal, (decision) => void enqueue({ kind: 'decide', decision }));
  setHandler(webhookSignal, (hint) => {
    const checked = webhookHintSchema.safeParse(hint);
    if (!checked.success)
      return void log.warn('webhook signal refused: invalid input', { issues: issueText(checked.error.issues) });
    enqueue({ kind: 'webhook', hint: checked.data, receivedAtMs: Date.now() });
  });
  setHandler(cancelUpdate, (request) => answerOnceProcessed({ kind: 'cancel', request }), {
    validator: (request) => {
      ready();
      const checked = cancelRequestSchema.safeParse(request);
      if (!checked.success) throw new Error(`ASYNCJOB_ERR_INVALID_INPUT: ${issueText(checked.error.issues)}`);
      const dryRun = requestCancel(record, checked.data, ctx(0));
      if ('kind' in dryRun && dryRun.kind === 'refused') throw new Error(`${dryRun.code}: ${dryRun.message}`);
    },
  });
  setHandler(decideUpdate, (decision) => answerOnceProcessed({ kind: 'decide', decision }), {
    validator: (decision) => {
      ready();
      const checked = decisionSchema.safeParse(decision);
      if (!checked.success) throw new Error(`ASYNCJOB_ERR_DECISION_INCOMPLETE: ${issueText(checked.error.issues)}`);
      const dryRun = applyDecision(record, checked.data, ctx(0));
      if ('kind' in dryRun && dryRun.kind === 'refused') throw new Error(`${dryRun.code}: ${dryRun.message}`);
    },
  });

  /** Appends the entries of a workflow-made step and adopts the record the store holds (which is ahead after a lost reply). */
  const commit = async (step: StepResult): Promise<void> => {
    if (step.entries.length === 0) {
      record = step.record;
      return;
    }
    record = adoptReturned(
      step.record,
      await store.appendJournal({ record: withoutTails(step.record), entries: step.entries }),
    );
  };

  /** What a provider call receives: the record without its journal tails (`core/record-tails.ts`), a random draw. */
  const callInput = (r: OperationRecord) => ({ record: withoutTails(r), random: Math.random() });

  /** Runs one provider call; a failure of ours is planned again, never retried blindly (B2). */
  const call = async (action: string, run: () => Promise<OperationRecord>): Promise<void> => {
    try {
      record = adoptReturned(record, await run());
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
      if (cause?.nonRetryable) throw cause;
      log.warn(`${action} activity failed; planned again`, { error: String(err.cause?.message ?? err.message) });
      await commit(afterActivityFailure(record, action, String(err.cause?.message ?? err.message), ctx()));
    }
  };

  const processMessages = async (): Promise<void> => {
    while (pending.length > 0) {
      const message = pending.shift()!;
      const c = ctx();
      if (message.kind === 'cancel') {
        const step = requestCancel(record, message.request, c);
        if ('kind' in step && step.kind === 'refused') {
          answers.set(message.id, { accepted: false, code: step.code, message: step.message });
          log.warn('cancel refused', { code: step.code, message: step.message });
          // A refused Temporal cancellation request leaves no other trace: it is journalled, who asked and why not.
          if (
            message.request.requestedBy === TEMPORAL_CANCEL_REQUEST.requestedBy &&
            patched(RECORD_REFUSED_CANCEL_REQUEST)
          ) {
            await commit(
              recordRejectedDecision(
                record,
                { option: 'cancel', approvedBy: message.request.requestedBy, reason: message.request.reason },
                step,
                c,
              ),
            );
          }
          continue;
        }
        await commit(step as StepResult);
        answers.set(message.id, { accepted: true, localState: record.localState });
      } else if (message.kind === 'decide') {
        const checked = decisionSchema.safeParse(message.decision);
        const step = checked.success
          ? applyDecision(record, checked.data, c)
          : ({
              kind: 'refused',
              code: 'ASYNCJOB_ERR_DECISION_INCOMPLETE',
              message: issueText(checked.error.issues),
            } as const);
        if ('kind' in step && step.kind === 'refused') {
          // A2: a refused decision is recorded too (who tried what, and why it was refused).
          const raw = (
            typeof message.decision === 'object' && message.decision !== null ? message.decision : {}
          ) as Record<string, unknown>;
          await commit(recordRejectedDecision(record, raw, step, c));
          answers.set(message.id, { accepted: false, code: step.code, message: step.message });
          continue;
        }
        await commit(step as StepResult);
        answers.set(message.id, { accepted: true, localState: record.localState });
      } else {
        await commit(applyWebhookHint(record, { ...message.hint, receivedAtMs: message.receivedAtMs }, c));
      }
    }
  };

  // The client starts the run with the first state, the provider and the result deadline (its own estimate for a
  // relative deadline; the exact one goes with the next state change): no upsert, no visibility write, for them.
  const started = workflowInfo().typedSearchAttributes;
  const publishedAtStart =
    started.get(stateKey) === record.localState &&
    started.get(providerKey) === record.provider &&
    started.get(resultDeadlineKey) !== undefined;
  let shown = '';
  const publish = (): void => {
    const key = `${record.localState}|${record.jobId ?? ''}|${record.escalation?.reason ?? ''}`;
    if (key === shown) return;
    const first = shown === '';
    shown = key;
    if (!(first && publishedAtStart))
      upsertSearchAttributes([
        { key: stateKey, value: record.localState },
        { key: providerKey, value: record.provider },
        { key: providerJobIdKey, value: record.jobId ?? null },
        { key: escalationReasonKey, value: record.escalation?.reason ?? null },
        { key: resultDeadlineKey, value: new Date(record.deadlines.resultDeadlineMs) },
      ]);
    setCurrentDetails(
      record.escalation
        ? `**Escalated: ${record.escalation.reason}**\n\n${renderEscalation(record.escalation)
            .split('\n')
            .map((line) => `- ${line}`)
            .join('\n')}\n\nDecide with one of:\n\n${decideCommands(record.operationId, record.escalation)
            .map((command) => `    ${command}`)
            .join('\n')}`
        : `State **${record.localState}**${record.jobId ? `, provider job \`${record.jobId}\`` : ''}; status requests ${record.used.statusRequests} of ${record.budgets.maxStatusRequests}.`,
    );
  };

  /** Answers every queued message and waits for running handlers, so no update is left without an answer. */
  const settle = async (): Promise<void> => {
    for (;;) {
      await processMessages();
      if (allHandlersFinished() && pending.length === 0) return;
      await condition(() => allHandlersFinished() || pending.length > 0);
    }
  };

  // X1: a Temporal "Request Cancellation" (Web UI, `temporal workflow cancel`) is an operator's cancel intent, recorded
  // and handled by the cancel rules like any other, never a bare stop of the workflow. The loop runs shielded from
  // it; histories recorded before this (no marker) replay the old behaviour: the loop is cancelled.
  let loop: CancellationScope | undefined;
  CancellationScope.current().cancelRequested.catch(() => {
    if (patched(CANCEL_REQUEST_AS_INTENT)) enqueue({ kind: 'cancel', request: TEMPORAL_CANCEL_REQUEST });
    else loop?.cancel();
  });
  return CancellationScope.nonCancellable(() => {
    loop = new CancellationScope();
    return loop.run(() => run());
  });

  /** Runs the operation to its end (or to continue-as-new). */
  async function run(): Promise<OperationSummary> {
    if (!facts) {
      facts = await describeProvider({ provider: input.request.provider });
      // The provider's tuning goes under the caller's overrides; nothing was recorded yet, so the record is remade.
      if (facts.policy && !carried) record = makeRecord(facts.policy);
    }
    const provider = providerActivities(facts.taskQueue);
    const callOptions = providerCallOptions(facts);
    if (!carried) record = adoptReturned(record, await store.recordIntent({ record }));
    const historyLimit = input.historyEventLimit ?? DEFAULT_HISTORY_EVENT_LIMIT;

    for (;;) {
      await processMessages();
      publish();
      const info = workflowInfo();
      if (info.continueAsNewSuggested || info.historyLength >= historyLimit) {
        await settle();
        publish();
        return continueAsNew<typeof AsyncJobWorkflow>(input, { record, provider: facts!, pending });
      }
      const now = Date.now();
      const command = nextCommand(record, now);
      const label = `${record.jobId ?? record.operationId}`;
      switch (command.kind) {
        case 'finished':
          await settle();
          publish();
          return operationSummary(record);
        case 'wait':
          await condition(() => pending.length > 0, Math.max(1, command.untilMs - now), {
            summary: waitSummary(record.localState, record.schedule.delaySource),
          });
          break;
        case 'await_decision': {
          if (now >= command.untilMs) {
            await commit(decisionDeadlinePassed(record, ctx()));
            await settle();
            if (record.localState !== 'escalated') break;
            return operationSummary(record);
          }
          await condition(() => pending.length > 0, command.untilMs - now, { summary: 'decision deadline' });
          break;
        }
        case 'create': {
          const reserved = reserveCreateAttempt(record, ctx());
          if (reserved.kind === 'stopped') {
            await commit(reserved);
            break;
          }
          record = reserved.record;
          await call('create', () =>
            provider.createJob.executeWithOptions(
              { ...callOptions, summary: `create (attempt ${reserved.record.used.createAttempts})` },
              [{ ...callInput(reserved.record), payload: input.request.payload }],
            ),
          );
          break;
        }
        case 'reconcile': {
          // Re-sending create with the same token is a create request: reserved and counted first (B2, I3).
          if (facts.reconciliation === 'same_token_resend' || record.reconcileBy === 'resend') {
            const reserved = reserveCreateAttempt(record, ctx());
            if (reserved.kind === 'stopped') {
              await commit(reserved);
              break;
            }
            record = reserved.record;
          }
          const reconciling = record;
          await call('reconcile', () =>
            provider.reconcileJob.executeWithOptions(
              { ...callOptions, summary: `reconcile ${reconciling.operationId}` },
              [{ ...callInput(reconciling), payload: input.request.payload }],
            ),
          );
          break;
        }
        case 'read_status': {
          const woke = onWake(record, ctx());
          if (woke.kind === 'stopped') {
            await commit(woke);
            break;
          }
          if (woke.kind === 'not_yet') {
            await condition(() => pending.length > 0, Math.max(1, woke.atMs - now), {
              summary: waitSummary(record.localState, record.schedule.delaySource),
            });
            break;
          }
          record = woke.record;
          const summary = `status ${label} (${woke.record.used.statusRequests} of ${woke.record.budgets.maxStatusRequests})`;
          await call('status', () =>
            provider.readStatus.executeWithOptions({ ...callOptions, summary }, [callInput(woke.record)]),
          );
          break;
        }
        case 'cancel':
          await call('cancel', () =>
            provider.requestCancel.executeWithOptions({ ...callOptions, summary: `cancel ${label}` }, [
              callInput(record),
            ]),
          );
          break;
        case 'collect':
          await call('collect', () =>
            provider.collectResult.executeWithOptions({ ...callOptions, summary: `collect ${label}` }, [
              callInput(record),
            ]),
          );
          break;
      }
    }
  }
}

/** The patch that makes a Temporal cancellation request a recorded cancel intent. */
const CANCEL_REQUEST_AS_INTENT = 'asyncjob-temporal-cancel-as-intent';
/** The patch that journals a Temporal cancellation request the cancel rules refused. */
const RECORD_REFUSED_CANCEL_REQUEST = 'asyncjob-record-refused-cancel-request';

/**
 * The cancel intent of a Temporal cancellation request. The SDK does not give the workflow the requester's
 * identity or reason: they stay in the history's WorkflowExecutionCancelRequested event, which the intent names.
 */
const TEMPORAL_CANCEL_REQUEST = {
  requestedBy: 'temporal:request-cancellation',
  reason:
    'Request Cancellation in Temporal (Web UI, CLI or API); who asked and why: the WorkflowExecutionCancelRequested event',
  expectedEffect: 'the provider stops the job',
};
