/**
 * Interpreting a reconciliation answer (U2, U3, V4): the jobs a list or lookup names for our operation, or, for
 * `same_token_resend` (which also repeats an idempotent PUT/DELETE), the create answer to the repeated request.
 * Pure.
 */
import { answerSignal } from '../answer-signal';
import { type Observation, type RemoteStateCategory } from '../../../core/observation';
import { type ProviderContract, type Reconciliation } from '../contract';
import { readField } from '../field-path';
import {
  Problems,
  applyExtract,
  baseObservation,
  cut,
  finish,
  isPlainJsonObject,
  type ProviderAnswer,
  openAnswer,
} from './answer';
import { interpretCreate, type CreateContext } from './create';
import { readStateIfStated, readingFor } from './state';

/** One job found by reconciliation (U2). */
interface ReconcileMatch {
  remoteJobId: string;
  remoteState?: string;
  category?: RemoteStateCategory;
  createdAt?: string;
}

/** What the reconciliation looked for: our operation ID (client reference) and the idempotency token. */
export interface ReconcileContext extends CreateContext {
  clientReference?: string;
  token?: string;
}

/** What {@link interpretReconcile} returns: the observation and every matching job (more than one is U3). */
export interface ReconcileInterpretation {
  observation: Observation;
  matches: ReconcileMatch[];
}

const MAX_MATCHES = 1000;

/** A reconciliation that lists the provider's jobs: by our client reference, or by the idempotency token. */
type ListReconciliation = Extract<Reconciliation, { method: 'list_by_client_reference' | 'lookup_by_token' }>;

/**
 * Interprets a reconciliation answer (U2). For `list_by_client_reference` and `lookup_by_token`, every listed
 * job that matches (when the contract names a `matchField`, it must equal the client reference, or the token for
 * `lookup_by_token`; without that value nothing matches) with its state; the observation names the job when
 * exactly one matched, and has `errorCategory: 'multiple_matches'` when several did (U3: a human decides). For
 * `same_token_resend` the answer is a create answer (a job known by its poll URL alone matches too). For `none`,
 * an observation with `errorCategory: 'reconcile_unsupported'`.
 */
export function interpretReconcile(
  contract: ProviderContract,
  answer: ProviderAnswer,
  context: ReconcileContext = {},
): ReconcileInterpretation {
  const method = contract.reconciliation;
  if (method.method === 'none') {
    const observation = baseObservation(contract, 'reconcile', answer);
    observation.errorCategory = 'reconcile_unsupported';
    observation.signal = answerSignal(observation);
    return { observation, matches: [] };
  }
  if (method.method === 'same_token_resend') return interpretRepeatedCreate(contract, answer, context);
  return interpretJobList(contract, method, answer, context);
}

/** The answer to a repeated create (same token, or an idempotent PUT/DELETE) read as a create answer (U2, V4). */
function interpretRepeatedCreate(
  contract: ProviderContract,
  answer: ProviderAnswer,
  context: ReconcileContext,
): ReconcileInterpretation {
  const observation = interpretCreate(contract, answer, 'reconcile', context);
  const matches: ReconcileMatch[] =
    observation.remoteJobId === undefined
      ? []
      : [
          {
            remoteJobId: observation.remoteJobId,
            remoteState: observation.remoteState,
            category: observation.category,
          },
        ];
  return { observation, matches };
}

/** A list or lookup answer: every listed job that matches our operation, the job named when exactly one did (U2, U3). */
function interpretJobList(
  contract: ProviderContract,
  method: ListReconciliation,
  answer: ProviderAnswer,
  context: ReconcileContext,
): ReconcileInterpretation {
  const opened = openAnswer(contract, 'reconcile', answer);
  if (opened.kind === 'finished') return { observation: opened.observation, matches: [] };
  const { observation, json, problems } = opened;
  const list = readField(json, method.listField);
  if (!list.found || !Array.isArray(list.value)) {
    problems.add(`field ${method.listField} is ${list.found ? 'not an array' : 'missing'}`);
    return { observation: finish(observation, problems, { foreign: false }), matches: [] };
  }
  const matches: ReconcileMatch[] = [];
  list.value.forEach((item, index) => {
    if (matches.length >= MAX_MATCHES) return;
    const listed = { item, where: `${method.listField}[${index}]` };
    const match = readListedJob(contract, method, answer.status, context, listed, problems);
    if (match !== undefined) matches.push(match);
  });
  nameSingleMatch(observation, matches);
  return { observation: finish(observation, problems, { foreign: false }), matches };
}

/**
 * One listed item as a matching job, or undefined when it is not ours (its `matchField` differs) or unusable (a
 * problem is recorded, naming the item by `where`).
 */
function readListedJob(
  contract: ProviderContract,
  method: ListReconciliation,
  status: number,
  context: ReconcileContext,
  listed: { item: unknown; where: string },
  problems: Problems,
): ReconcileMatch | undefined {
  const { item, where } = listed;
  if (!isPlainJsonObject(item)) {
    problems.add(`${where} is not an object`);
    return undefined;
  }
  if (method.matchField !== undefined) {
    const expected = method.method === 'lookup_by_token' ? context.token : context.clientReference;
    const marker = readField(item, method.matchField);
    if (expected === undefined || !marker.found || marker.value !== expected) return undefined;
  }
  const remoteJobId = listedJobId(contract, method, item);
  if (remoteJobId === undefined || remoteJobId.length > 500) {
    problems.add(`${where} has no usable job ID (${method.jobId.map((s) => s.field).join(', ')})`);
    return undefined;
  }
  const itemProblems = new Problems();
  const state = readStateIfStated(readingFor(contract, undefined), status, item, itemProblems);
  for (const itemProblem of itemProblems.list) problems.add(`${where}: ${itemProblem}`);
  const match: ReconcileMatch = { remoteJobId };
  if (state.remoteState !== undefined) match.remoteState = state.remoteState;
  if (state.category !== undefined) match.category = state.category;
  if (method.createdAtField !== undefined) {
    const createdAt = readField(item, method.createdAtField);
    if (createdAt.found && typeof createdAt.value === 'string') match.createdAt = cut(createdAt.value, 100);
  }
  return match;
}

/** The job ID of a listed item: the first of the contract's fields present; a number is taken as its digits. */
function listedJobId(
  contract: ProviderContract,
  method: ListReconciliation,
  item: Record<string, unknown>,
): string | undefined {
  for (const source of method.jobId) {
    const read = readField(item, source.field);
    if (!read.found || read.value === null) continue;
    const raw = typeof read.value === 'number' && Number.isSafeInteger(read.value) ? String(read.value) : read.value;
    if (typeof raw !== 'string') return undefined;
    return applyExtract(raw, source.extract, source.stripPrefix, contract.baseUrl);
  }
  return undefined;
}

/** Names the job on the observation when every match is the same job; several distinct jobs are U3's multiple_matches. */
function nameSingleMatch(observation: Observation, matches: readonly ReconcileMatch[]): void {
  const distinct = new Set(matches.map((m) => m.remoteJobId));
  if (distinct.size === 1 && matches[0] !== undefined) {
    observation.remoteJobId = matches[0].remoteJobId;
    if (matches[0].remoteState !== undefined) observation.remoteState = matches[0].remoteState;
    if (matches[0].category !== undefined) observation.category = matches[0].category;
  } else if (distinct.size > 1) {
    observation.errorCategory = 'multiple_matches';
  }
}
