/**
 * What operators see of a running operation in the Temporal Web UI and visibility: its search attributes and the
 * workflow's current details (the escalation with the commands that answer it, or the state and budget).
 */
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { decideCommands } from '../core/decide-command';
import { renderEscalation } from '../core/escalation';
import { type OperationRecord } from '../core/operation';
import { escalationReasonKey, providerJobIdKey, providerKey, resultDeadlineKey, stateKey } from './search-attributes';

/** Publishes a record's visible facts when they change (one upsert per change, a visibility write each). */
export class Publication {
  private shown = '';
  /**
   * The client starts the run with the first state, the provider and the result deadline (its own estimate for a
   * relative deadline; the exact one goes with the next state change): no upsert, no visibility write, for them.
   */
  private readonly publishedAtStart: boolean;

  constructor(first: OperationRecord) {
    const started = workflowInfo().typedSearchAttributes;
    this.publishedAtStart =
      started.get(stateKey) === first.localState &&
      started.get(providerKey) === first.provider &&
      started.get(resultDeadlineKey) !== undefined;
  }

  publish(record: OperationRecord): void {
    const key = `${record.localState}|${record.jobId ?? ''}|${record.escalation?.reason ?? ''}`;
    if (key === this.shown) return;
    const first = this.shown === '';
    this.shown = key;
    if (!(first && this.publishedAtStart))
      upsertSearchAttributes([
        { key: stateKey, value: record.localState },
        { key: providerKey, value: record.provider },
        { key: providerJobIdKey, value: record.jobId ?? null },
        { key: escalationReasonKey, value: record.escalation?.reason ?? null },
        { key: resultDeadlineKey, value: new Date(record.deadlines.resultDeadlineMs) },
      ]);
    setCurrentDetails(currentDetails(record));
  }
}

/** The Web UI's current details: the escalation and how to answer it, or the state and the status budget. */
function currentDetails(record: OperationRecord): string {
  if (!record.escalation) {
    const job = record.jobId ? `, provider job \`${record.jobId}\`` : '';
    return `State **${record.localState}**${job}; status requests ${record.used.statusRequests} of ${record.budgets.maxStatusRequests}.`;
  }
  const facts = renderEscalation(record.escalation)
    .split('\n')
    .map((line) => `- ${line}`)
    .join('\n');
  const commands = decideCommands(record.operationId, record.escalation)
    .map((command) => `    ${command}`)
    .join('\n');
  return `**Escalated: ${record.escalation.reason}**\n\n${facts}\n\nDecide with one of:\n\n${commands}`;
}
