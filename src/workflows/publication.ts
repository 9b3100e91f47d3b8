/**
 * What operators see of a running operation in the Temporal Web UI and visibility: its search attributes and the
 * workflow's current details (the escalation with the commands that answer it, or the state and budget).
 */
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { type OperationRecord } from '../core/operation';
import { currentDetails, publicationKey, searchedFacts } from '../core/search-publication';
import { escalationReasonKey, providerJobIdKey, providerKey, resultDeadlineKey, stateKey } from './search-attributes';

/**
 * Publishes a record's visible facts. Search attributes are upserted only when the state, the provider job ID or the
 * escalation reason changed (one history event and one visibility write each), never for a status read that changed
 * none of them; the current details, which cost no history event, follow every call.
 */
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

  /** Publishes `record`; safe to call on every loop turn (an unchanged key upserts nothing). */
  publish(record: OperationRecord): void {
    const key = publicationKey(record);
    if (key !== this.shown) {
      const first = this.shown === '';
      this.shown = key;
      // Which upserts a run issues is replayed: this condition is the one every recorded history was made with.
      if (!(first && this.publishedAtStart)) upsertSearchAttributes(searchAttributesOf(record));
    }
    setCurrentDetails(currentDetails(record));
  }
}

/** All five search attributes of a record, as one upsert. */
function searchAttributesOf(record: OperationRecord): SearchAttributeUpdatePair[] {
  const facts = searchedFacts(record);
  return [
    { key: stateKey, value: facts.AsyncJobState },
    { key: providerKey, value: facts.AsyncJobProvider },
    { key: providerJobIdKey, value: facts.AsyncJobProviderJobId },
    { key: escalationReasonKey, value: facts.AsyncJobEscalationReason },
    { key: resultDeadlineKey, value: new Date(facts.AsyncJobResultDeadline) },
  ];
}
