/**
 * Which decision options can act (E3): the one place that says what each option needs from the adapter's
 * capabilities and the operation's recorded facts. An escalation offers only options that can act, and a decision
 * naming one that cannot is refused before anything happens, naming what is missing. Pure.
 */
import type { AdapterCapabilities, DecisionOption } from './escalation';
import type { EscalationReason, LocalState } from './journal';
import { locatesResult } from './observation';
import type { OperationRecord } from './operation';

/** A fact an option needs that may be missing. */
export type MissingFact =
  /** The provider document declares no cancel call. */
  | 'cancel_endpoint'
  /** The one cancel call was already sent (X3). */
  | 'cancel_not_sent'
  /** No provider job is known (no job ID, never accepted): nothing to read, cancel or collect by. */
  | 'provider_job'
  /** The create may have reached the provider, and re-sending it could start a second job: no token, not idempotent (I3). */
  | 'same_token_resend'
  /** Collecting the result again is not known to be safe (R5). */
  | 'repeatable_collect'
  /** No result reference and no provider job to collect the result by (R1). */
  | 'result_location'
  /** No result on record to accept (A1). */
  | 'result_on_record'
  /** No provider job IDs reported to choose from (U3). */
  | 'job_ids'
  /** The provider document declares no list or lookup to find the job by (U2). */
  | 'job_lookup';

/** What each missing fact means, for refusals and docs. */
const MISSING_FACT_TEXT: Readonly<Record<MissingFact, string>> = {
  cancel_endpoint: 'the provider document declares no cancel call',
  cancel_not_sent: 'the one cancel request was already sent (X3)',
  provider_job: 'no provider job is known (no job ID, never accepted)',
  same_token_resend:
    'the create may have reached the provider and carries no idempotency token, nor is its method idempotent (I3)',
  repeatable_collect: 'collecting the result is not declared safe to repeat (R5)',
  result_location: 'there is no result reference nor a provider job to collect the result by',
  result_on_record: 'there is no result on record to accept',
  job_ids: 'the provider reported no job IDs to choose from',
  job_lookup: 'the provider document declares no list or lookup to find the job by (U2)',
};

/** The facts the options are decided on: the adapter's capabilities and what the record holds. */
export interface OptionFacts {
  capabilities: AdapterCapabilities;
  /** A provider job is known: a job ID, or an accepted job known by its poll URL. */
  providerJob: boolean;
  /** Every job ID the provider reported (U3). */
  jobIds: readonly string[];
  /** The one cancel request was sent (X3). */
  cancelSent: boolean;
  /** The create may have reached the provider with an unknown outcome (U1): raised from `create_unknown` or `reconciliation`. */
  createMayHaveArrived: boolean;
  /** A result summary is on record (a collected, possibly invalid, result). */
  resultOnRecord: boolean;
  /** The provider named where the result is (R1). */
  resultLocated: boolean;
}

const AMBIGUOUS_CREATE_STATES: readonly LocalState[] = ['create_unknown', 'reconciliation'];

/** The reconciliation methods that ask the provider whether it has the job, by a list or a lookup (U2). */
const LOOKUP_RECONCILIATIONS: readonly string[] = ['list_by_client_reference', 'lookup_by_token', 'lookup'];

/**
 * The capabilities with what the reconciliation method says: `sameTokenResend` when unknown (facts recorded before
 * it existed lack it, and a provider that reconciles by `same_token_resend` has a token or an idempotent create by
 * its contract's validation, V4), and `lookup`, whether it finds a job by a list or a lookup (U2).
 */
export function withReconciliationFacts(
  capabilities: AdapterCapabilities,
  reconciliation: string,
): AdapterCapabilities {
  return {
    ...capabilities,
    sameTokenResend: capabilities.sameTokenResend ?? reconciliation === 'same_token_resend',
    lookup: LOOKUP_RECONCILIATIONS.includes(reconciliation),
  };
}

/** The option facts of `record`, for an escalation raised from (or open since) `raisedFrom`. Pure. */
export function optionFacts(
  record: Pick<OperationRecord, 'jobId' | 'acceptedAtMs' | 'remote' | 'cancel' | 'result'>,
  capabilities: AdapterCapabilities,
  raisedFrom: LocalState,
): OptionFacts {
  const jobIds =
    record.remote.jobIds.length > 0 ? record.remote.jobIds : record.jobId !== undefined ? [record.jobId] : [];
  return {
    capabilities,
    // Only a job the operation follows: job IDs in conflict (U3) name no job to read or cancel until one is adopted.
    providerJob: record.jobId !== undefined || record.acceptedAtMs !== undefined,
    jobIds,
    cancelSent: record.cancel?.sentAtMs !== undefined,
    createMayHaveArrived: AMBIGUOUS_CREATE_STATES.includes(raisedFrom),
    resultOnRecord: record.result !== null,
    resultLocated: locatesResult(record.remote.resultReference),
  };
}

/**
 * What `option` needs that `facts` lack; empty when it can act (E3). `extend` and `keep_bounds` go on reading the
 * job's status, so they need a provider job; `cancel_at_provider` needs a cancel call, a job, and no cancel sent;
 * `retry_create_same_token` needs a create that cannot start a second job (a token or an idempotent method) unless
 * nothing can have been created; `look_up_job` a list or a lookup to find the job by (U2); `retry_collect` needs a
 * repeatable collect and somewhere to collect from;
 * `accept_result` a result on record; `adopt_job` reported job IDs. `close` and `inspect_provider_console` always act.
 */
export function missingForOption(option: DecisionOption, facts: OptionFacts): MissingFact[] {
  const missing: MissingFact[] = [];
  const need = (fact: MissingFact, present: boolean) => void (present ? undefined : missing.push(fact));
  switch (option) {
    case 'extend':
    case 'keep_bounds':
      need('provider_job', facts.providerJob);
      break;
    case 'cancel_at_provider':
      need('cancel_endpoint', facts.capabilities.cancel);
      need('provider_job', facts.providerJob);
      need('cancel_not_sent', !facts.cancelSent);
      break;
    case 'retry_create_same_token':
      need('same_token_resend', facts.capabilities.sameTokenResend === true || !facts.createMayHaveArrived);
      break;
    case 'look_up_job':
      need('job_lookup', facts.capabilities.lookup === true);
      break;
    case 'retry_collect':
      need('repeatable_collect', facts.capabilities.repeatableCollect);
      need('result_location', facts.resultLocated || facts.providerJob);
      break;
    case 'accept_result':
      need('result_on_record', facts.resultOnRecord);
      break;
    case 'adopt_job':
      need('job_ids', facts.jobIds.length > 0);
      break;
    case 'close':
    case 'inspect_provider_console':
      break;
  }
  return missing;
}

/**
 * The options a reason may offer before executability filters them (E1): its own, and, before any provider job
 * is known, sending create again in place of the options that need a job, and, when the create may have arrived,
 * looking the job up (U2). Never for `authorization_denied` (H4: no retry with the same credential) nor
 * `job_id_conflict` (U3: a human picks one of the reported jobs).
 */
export function candidateOptions(
  byReason: readonly DecisionOption[],
  reason: EscalationReason,
  facts: OptionFacts,
): DecisionOption[] {
  const beforeJob = !facts.providerJob && reason !== 'authorization_denied' && reason !== 'job_id_conflict';
  const lookUp = beforeJob && facts.createMayHaveArrived && !byReason.includes('look_up_job');
  const retryCreate = beforeJob && !byReason.includes('retry_create_same_token');
  return [
    ...(retryCreate ? (['retry_create_same_token'] as const) : []),
    ...(lookUp ? (['look_up_job'] as const) : []),
    ...byReason,
  ];
}

/** The refusal text for an option that cannot act: each missing fact with what it means. */
function missingText(option: DecisionOption, missing: readonly MissingFact[]): string {
  return `option: "${option}" cannot act here: missing ${missing.map((m) => `${m} (${MISSING_FACT_TEXT[m]})`).join('; ')} (E3)`;
}

/**
 * Why `option` cannot be decided on an escalation for `reason` that offered `offered` (E3, A2), or undefined when
 * it is offered and can act. An option the reason would offer (`byReason`) but the facts keep from acting is not
 * executable, naming what is missing, also when an escalation raised on older facts offered it; an option the
 * reason never offers is not offered. Pure.
 */
export function optionRefusal(
  escalation: { reason: EscalationReason; options: readonly { option: DecisionOption }[] },
  byReason: readonly DecisionOption[],
  option: DecisionOption,
  facts: OptionFacts | undefined,
): { code: 'ASYNCJOB_ERR_OPTION_NOT_EXECUTABLE' | 'ASYNCJOB_ERR_OPTION_NOT_OFFERED'; message: string } | undefined {
  const missing = facts === undefined ? [] : missingForOption(option, facts);
  const offered = escalation.options.some((o) => o.option === option);
  const candidate = facts !== undefined && candidateOptions(byReason, escalation.reason, facts).includes(option);
  if (missing.length > 0 && (offered || candidate))
    return { code: 'ASYNCJOB_ERR_OPTION_NOT_EXECUTABLE', message: missingText(option, missing) };
  if (offered) return undefined;
  const alsoMissing = missing.length > 0 ? `; it ${missingText(option, missing).replace(/^option: "[^"]+" /, '')}` : '';
  return {
    code: 'ASYNCJOB_ERR_OPTION_NOT_OFFERED',
    message: `option: "${option}" was not offered for ${escalation.reason}; offered: ${escalation.options.map((o) => o.option).join(', ')}${alsoMissing}`,
  };
}
