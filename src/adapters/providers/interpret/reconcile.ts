/**
 * Interpreting a reconciliation answer (U2, U3, V4): the jobs a list or lookup names for our operation, or, for
 * `same_token_resend` (which also repeats an idempotent PUT/DELETE), the create answer to the repeated request.
 * Pure.
 */
import { type Observation, type RemoteStateCategory } from '../../../core/observation';
import { type ProviderContract } from '../contract';
import { readField } from '../field-path';
import {
  Problems,
  applyExtract,
  baseObservation,
  cut,
  errorAnswer,
  finish,
  isPlainJsonObject,
  isSuccessStatus,
  readBody,
  type ProviderAnswer,
} from './answer';
import { interpretCreate, type CreateContext } from './create';
import { readStateIfStated, readingFor } from './state';

/** One job found by reconciliation (U2). */
export interface ReconcileMatch {
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
    return { observation, matches: [] };
  }
  if (method.method === 'same_token_resend') {
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
  if (!isSuccessStatus(answer.status)) return { observation: errorAnswer(contract, 'reconcile', answer), matches: [] };
  const observation = baseObservation(contract, 'reconcile', answer);
  const problems = new Problems();
  const body = readBody(answer);
  if (!body.ok) {
    problems.add(body.problem);
    return { observation: finish(observation, problems, { foreign: false }), matches: [] };
  }
  const list = readField(body.json, method.listField);
  if (!list.found || !Array.isArray(list.value)) {
    problems.add(`field ${method.listField} is ${list.found ? 'not an array' : 'missing'}`);
    return { observation: finish(observation, problems, { foreign: false }), matches: [] };
  }
  const matches: ReconcileMatch[] = [];
  list.value.forEach((item, index) => {
    if (matches.length >= MAX_MATCHES) return;
    if (!isPlainJsonObject(item)) {
      problems.add(`${method.listField}[${index}] is not an object`);
      return;
    }
    if (method.matchField !== undefined) {
      const expected = method.method === 'lookup_by_token' ? context.token : context.clientReference;
      const marker = readField(item, method.matchField);
      if (expected === undefined || !marker.found || marker.value !== expected) return;
    }
    let remoteJobId: string | undefined;
    for (const source of method.jobId) {
      const read = readField(item, source.field);
      if (!read.found || read.value === null) continue;
      const raw = typeof read.value === 'number' && Number.isSafeInteger(read.value) ? String(read.value) : read.value;
      if (typeof raw !== 'string') break;
      remoteJobId = applyExtract(raw, source.extract, source.stripPrefix, contract.baseUrl);
      break;
    }
    if (remoteJobId === undefined || remoteJobId.length > 500) {
      problems.add(
        `${method.listField}[${index}] has no usable job ID (${method.jobId.map((s) => s.field).join(', ')})`,
      );
      return;
    }
    const itemProblems = new Problems();
    const state = readStateIfStated(readingFor(contract, undefined), answer.status, item, itemProblems);
    for (const p of itemProblems.list) problems.add(`${method.listField}[${index}]: ${p}`);
    const match: ReconcileMatch = { remoteJobId };
    if (state.remoteState !== undefined) match.remoteState = state.remoteState;
    if (state.category !== undefined) match.category = state.category;
    if (method.createdAtField !== undefined) {
      const createdAt = readField(item, method.createdAtField);
      if (createdAt.found && typeof createdAt.value === 'string') match.createdAt = cut(createdAt.value, 100);
    }
    matches.push(match);
  });
  const distinct = new Set(matches.map((m) => m.remoteJobId));
  if (distinct.size === 1 && matches[0] !== undefined) {
    observation.remoteJobId = matches[0].remoteJobId;
    if (matches[0].remoteState !== undefined) observation.remoteState = matches[0].remoteState;
    if (matches[0].category !== undefined) observation.category = matches[0].category;
  } else if (distinct.size > 1) {
    observation.errorCategory = 'multiple_matches';
  }
  return { observation: finish(observation, problems, { foreign: false }), matches };
}
