/**
 * What the workflow shows operators outside its queries (pure; imported by the workflow): the search attributes and
 * when a change of them is worth an upsert, and the Web UI's current details.
 *
 * An upsert is a history event and a visibility write. The workflow upserts only when a value operators search by
 * changes: the state, the provider job ID or the escalation reason (docs/operating.md). What changes with every
 * status read (counters, the next poll time, the provider's state word and progress) is no search attribute: the
 * `state` query reads the record itself, and the current details, which cost no history event, are set every turn.
 */
import { decideCommands } from './decide-command';
import { renderEscalation } from './escalation';
import { type EscalationReason, type LocalState } from './journal';
import { type OperationRecord } from './operation';
import { type SearchAttributeName } from './search-attribute-names';

/** The value of each search attribute for a record, keyed by its name; `null` removes the attribute. */
export interface SearchedFacts {
  AsyncJobState: LocalState;
  AsyncJobProvider: string;
  AsyncJobProviderJobId: string | null;
  AsyncJobEscalationReason: EscalationReason | null;
  /** Milliseconds since the epoch (a Datetime attribute). */
  AsyncJobResultDeadline: number;
}

/** The search attributes of a record, all of them, as one upsert writes them. */
export function searchedFacts(record: OperationRecord): SearchedFacts {
  return {
    AsyncJobState: record.localState,
    AsyncJobProvider: record.provider,
    AsyncJobProviderJobId: record.jobId ?? null,
    AsyncJobEscalationReason: record.escalation?.reason ?? null,
    AsyncJobResultDeadline: record.deadlines.resultDeadlineMs,
  };
}

/**
 * The search attributes whose change is an upsert. The other two never change on their own: the provider is fixed for
 * the operation, and the result deadline moves only by an extension decision, which always leaves `escalated` (a
 * state change, whose upsert carries the new deadline).
 */
export const UPSERT_ON_CHANGE_OF = [
  'AsyncJobState',
  'AsyncJobProviderJobId',
  'AsyncJobEscalationReason',
] as const satisfies readonly SearchAttributeName[];

/**
 * The values that decide an upsert, as one string: an upsert is due when it differs from the last one published.
 * The string is the one runs recorded before this module compared (`state|jobId|reason`), so their upserts replay.
 */
export function publicationKey(record: OperationRecord): string {
  const facts = searchedFacts(record);
  return UPSERT_ON_CHANGE_OF.map((name) => facts[name] ?? '').join('|');
}

/**
 * The Web UI's current details (E2): an open escalation with the commands that answer it, or the state, the provider
 * job and the status requests used. Exact as of the last loop turn; setting them writes no history event.
 */
export function currentDetails(record: OperationRecord): string {
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
