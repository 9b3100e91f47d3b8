/**
 * Interpreting a reconciliation answer (U2, U3, V4): the jobs a list names for our operation, the job a lookup
 * names (or that there is none), or, for `same_token_resend` (which also repeats an idempotent PUT/DELETE), the
 * create answer to the repeated request. Pure.
 */
import { answerSignal } from '../answer-signal';
import { type Observation, type RemoteStateCategory } from '../../../core/observation';
import { mayMeanAbsent, type LookupReconciliation, type ProviderContract, type Reconciliation } from '../contract';
import { readField } from '../field-path';
import {
  Problems,
  applyExtract,
  baseObservation,
  cut,
  describeSource,
  errorAnswer,
  finish,
  isPlainJsonObject,
  readBody,
  readProviderError,
  readSources,
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
 * Interprets a reconciliation answer (U2). For `lookup`, the job its answer names, or that there is none (see
 * `interpretLookup`). For `list_by_client_reference` and `lookup_by_token`, every listed
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
  if (method.method === 'lookup') return interpretLookup(contract, method, answer);
  return interpretJobList(contract, method, answer, context);
}

/**
 * A provider error code as the lookup's `absent.errorCodes` may name it: as given, or the part after the last `#`
 * (AWS's `__type` is `namespace#ResourceNotFoundException`).
 */
function errorCodeNames(code: string | undefined): string[] {
  if (code === undefined) return [];
  const hash = code.lastIndexOf('#');
  return hash === -1 ? [code] : [code, code.slice(hash + 1)];
}

/** Whether a non-2xx lookup answer says "no such job": a declared status, or a 4xx with a declared error code. */
function isAbsentAnswer(contract: ProviderContract, method: LookupReconciliation, answer: ProviderAnswer): boolean {
  if (method.absent.statuses.includes(answer.status)) return true;
  const codes = method.absent.errorCodes;
  if (codes === undefined || !mayMeanAbsent(answer.status)) return false;
  const body = readBody(answer);
  const code = body.ok ? readProviderError(contract, body.json)?.code : undefined;
  return errorCodeNames(code).some((name) => codes.includes(name));
}

/** True for a 2xx body that names nothing: no bytes, or JSON `null`, `{}` or `[]`. */
function isEmptyBody(answer: ProviderAnswer, json: unknown): boolean {
  if (json === undefined) return (answer.bodyText ?? '').trim() === '';
  if (json === null) return true;
  return typeof json === 'object' && Object.keys(json).length === 0;
}

/**
 * A lookup answer (U2): a 2xx naming a job is our job, with its state when the answer states one; an answer the
 * contract's `absent` names, or a 2xx with an empty body, is "no such job" (`job_absent`: the signal `not_found`);
 * a 404 it does not name is a refusal like any other 4xx; anything else is read by its status. A 2xx with a body
 * but no job ID is unreadable.
 */
function interpretLookup(
  contract: ProviderContract,
  method: LookupReconciliation,
  answer: ProviderAnswer,
): ReconcileInterpretation {
  const success = answer.status >= 200 && answer.status < 300;
  if (!success) {
    const observation = errorAnswer(contract, 'reconcile', answer);
    if (isAbsentAnswer(contract, method, answer)) observation.errorCategory = 'job_absent';
    else if (observation.signal === 'not_found') observation.errorCategory = 'undeclared_not_found';
    observation.signal = answerSignal(observation);
    return { observation, matches: [] };
  }
  const opened = openAnswer(contract, 'reconcile', answer);
  if (opened.kind === 'finished') return { observation: opened.observation, matches: [] };
  const { observation, json, problems, flags } = opened;
  const jobId = readSources(method.jobId, answer, json, contract);
  if (jobId.kind === 'mistyped') problems.add(jobId.problem);
  else if (jobId.kind === 'found' && jobId.value.length > 500)
    problems.add(`the job ID from ${describeSource(jobId.source)} is longer than 500 characters`);
  else if (jobId.kind === 'found') {
    observation.remoteJobId = jobId.value;
    const state = readStateIfStated(readingFor(contract, undefined), answer.status, json, problems);
    if (state.remoteState !== undefined) observation.remoteState = state.remoteState;
    if (state.category !== undefined) observation.category = state.category;
  } else if (isEmptyBody(answer, json)) observation.errorCategory = 'job_absent';
  else problems.add(`the lookup answer names no job (${method.jobId.map(describeSource).join(', ')} missing)`);
  const match = observation.remoteJobId === undefined ? [] : [lookupMatch(observation)];
  return { observation: finish(observation, problems, flags), matches: problems.empty ? match : [] };
}

/** The job a lookup found, as a match. */
function lookupMatch(observation: Observation): ReconcileMatch {
  const match: ReconcileMatch = { remoteJobId: observation.remoteJobId! };
  if (observation.remoteState !== undefined) match.remoteState = observation.remoteState;
  if (observation.category !== undefined) match.category = observation.category;
  return match;
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
