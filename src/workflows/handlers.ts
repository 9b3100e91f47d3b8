/**
 * The workflow's message handlers. Queries read the record and never wait or change anything; signals and
 * updates queue their message for the main loop (in arrival order, between outside calls). The cancel and
 * extension updates' validators refuse at once, with our error code as the failure's type, what the main loop would
 * refuse; a decision is refused by the main loop, which records it (A2), and its update fails with that code.
 */
import { log, setHandler } from '@temporalio/workflow';
import { renderEscalation } from '../core/escalation';
import { issueText } from '../core/issues';
import { cancelWaitsForJob, extensionRequestSchema, isRefusal, requestCancel, requestExtension } from '../core/step';
import {
  cancelRequestSchema,
  cancelSignal,
  cancelUpdate,
  decideSignal,
  decideUpdate,
  escalationQuery,
  extensionUpdate,
  historyQuery,
  stateQuery,
  webhookHintSchema,
  webhookSignal,
} from './messages';
import type { OperationRun } from './operation-run';
import { invalidInput, refusal } from './refusals';

/** Sets every handler of the run (before its first await, so they work from the first workflow task). */
export function setMessageHandlers(run: OperationRun): void {
  setHandler(stateQuery, () => run.record);
  setHandler(escalationQuery, () =>
    run.record.escalation ? { ...run.record.escalation, text: renderEscalation(run.record.escalation) } : null,
  );
  setHandler(historyQuery, () => run.record.journal.transitions);
  setSignalHandlers(run);
  setUpdateHandlers(run);
}

function setSignalHandlers(run: OperationRun): void {
  setHandler(cancelSignal, (request) => {
    const checked = cancelRequestSchema.safeParse(request);
    if (!checked.success) {
      log.warn('cancel signal refused: invalid input', { issues: issueText(checked.error.issues) });
      return;
    }
    run.inbox.enqueue({ kind: 'cancel', request: checked.data });
  });
  setHandler(decideSignal, (decision) => void run.inbox.enqueue({ kind: 'decide', decision, transport: 'signal' }));
  setHandler(webhookSignal, (hint) => {
    const checked = webhookHintSchema.safeParse(hint);
    if (!checked.success) {
      log.warn('webhook signal refused: invalid input', { issues: issueText(checked.error.issues) });
      return;
    }
    run.inbox.enqueue({ kind: 'webhook', hint: checked.data, receivedAtMs: Date.now() });
  });
}

function setUpdateHandlers(run: OperationRun): void {
  // Requests are queued as parsed (their requester canonical, D1), never as typed: that is what the journal records.
  const cancel = (request: unknown) =>
    run.inbox.answerOnceProcessed({ kind: 'cancel', request: cancelRequestSchema.parse(request) });
  setHandler(cancelUpdate, cancel, {
    validator: (request) => {
      run.ensureReady();
      const checked = cancelRequestSchema.safeParse(request);
      if (!checked.success) throw invalidInput(issueText(checked.error.issues));
      const dryRun = requestCancel(run.record, checked.data, run.stepContext(0));
      // X5: a cancel before the job is known is accepted and held, not refused.
      if (isRefusal(dryRun) && !cancelWaitsForJob(run.record, dryRun)) throw refusal(dryRun.code, dryRun.message);
    },
  });
  // A2: a decision is checked where it is recorded, accepted or refused (as one by signal), so a refusal enters the
  // history and the journal instead of ending in a validator; the update then fails with the refusal's code.
  setHandler(
    decideUpdate,
    async (decision) => {
      const answer = await run.inbox.answerOnceProcessed({ kind: 'decide', decision, transport: 'update' });
      if (!answer.accepted) throw refusal(answer.code, answer.message);
      return answer;
    },
    { validator: (_decision) => run.ensureReady() },
  );
  const extension = (request: unknown) =>
    run.inbox.answerOnceProcessed({ kind: 'extension', request: extensionRequestSchema.parse(request) });
  setHandler(extensionUpdate, extension, {
    validator: (request) => {
      run.ensureReady();
      const checked = extensionRequestSchema.safeParse(request);
      if (!checked.success) throw invalidInput(issueText(checked.error.issues));
      const dryRun = requestExtension(run.record, checked.data, run.stepContext(0));
      if (isRefusal(dryRun)) throw refusal(dryRun.code, dryRun.message);
    },
  });
}
