/**
 * What an operation run as a child workflow tells its parent (N3): each time an escalation opens or closes, the
 * parent gets the `asyncjob.escalation` signal with the operation ID and the open escalation (or null), so the
 * parent's handle and its `asyncjob.escalations` query show what the job waits for, and the parent's own history
 * holds the child's signal. Definitions shared by `AsyncJobWorkflow` and `asyncjob/workflow`.
 */
import { defineQuery, defineSignal, getExternalWorkflowHandle, log, patched, workflowInfo } from '@temporalio/workflow';
import { renderEscalation, type OpenEscalation } from '../core/escalation';
import type { OperationRecord } from '../core/operation';

/** An open escalation as a parent sees it: the record's, with its text rendered. */
export type ParentEscalation = OpenEscalation & { text: string };

/** The signal a child operation sends its parent: its open escalation, or null once none is open. */
export interface EscalationNotice {
  operationId: string;
  escalation: ParentEscalation | null;
}

/** Sent by `AsyncJobWorkflow` to its parent when an escalation opens or closes (N3). */
export const escalationNoticeSignal = defineSignal<[EscalationNotice]>('asyncjob.escalation');
/** Registered on the parent by `asyncjob/workflow`: the open escalations of its child operations. */
export const escalationsQuery = defineQuery<EscalationNotice[]>('asyncjob.escalations');

/** Older histories have no signal to the parent: the marker keeps them replaying as they ran. */
const ESCALATION_TO_PARENT_PATCH = 'asyncjob-escalation-to-parent';

/** The escalation a record shows its parent, or null. */
function parentEscalation(record: OperationRecord): ParentEscalation | null {
  return record.escalation ? { ...record.escalation, text: renderEscalation(record.escalation) } : null;
}

/** Which escalation a notice is about: changes when one opens, closes or is replaced. */
function escalationKey(record: OperationRecord): string {
  const open = record.escalation;
  return open ? `${open.id ?? ''}/${open.raisedAtMs}/${open.reason}` : '';
}

/**
 * Follows a run's record and signals the parent, in order, each time the open escalation changes. A run without a
 * parent sends nothing and calls no patch. A signal that fails (the parent is gone) is logged, never fails the
 * operation.
 */
export class ParentLink {
  private shown: string;
  private sending: Promise<void> = Promise.resolve();

  /** `first`: the record the run starts from (carried through continue-as-new: what the parent was told already). */
  constructor(first: OperationRecord, carried: boolean) {
    this.shown = carried ? escalationKey(first) : '';
  }

  /** Signals the parent when the record's open escalation differs from the last one told; safe on every turn. */
  follow(record: OperationRecord): void {
    const parent = workflowInfo().parent;
    const key = escalationKey(record);
    if (parent === undefined || key === this.shown) return;
    if (!patched(ESCALATION_TO_PARENT_PATCH)) return;
    this.shown = key;
    const notice: EscalationNotice = { operationId: record.operationId, escalation: parentEscalation(record) };
    // The parent's current run: a parent that continued as new still waits for this operation.
    const handle = getExternalWorkflowHandle(parent.workflowId);
    // One after another, so the parent receives them in the order the escalation changed.
    this.sending = this.sending.then(() =>
      handle.signal(escalationNoticeSignal, notice).catch((err: unknown) => {
        log.warn('the parent workflow could not be told of the escalation', {
          parentWorkflowId: parent.workflowId,
          error: err instanceof Error ? err.message : String(err),
        });
      }),
    );
  }

  /** Resolves once every notice is sent (or failed and logged): before the run returns, so none is dropped. */
  sent(): Promise<void> {
    return this.sending;
  }
}
