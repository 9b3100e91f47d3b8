/**
 * Interpreting status and cancel answers (P1, P6-P8, X1, V1): the state with the reading of the poll URL in
 * use, a new poll URL named by a pending answer, and what a cancel answer says of the job. Pure.
 */
import { type Observation } from '../../../core/observation';
import { type ProviderContract } from '../contract';
import {
  Problems,
  baseObservation,
  cut,
  errorAnswer,
  finish,
  isPlainJsonObject,
  readBody,
  type ProviderAnswer,
  openAnswer,
} from './answer';
import { readJobDocument } from './job-document';
import { followedPollUrl } from './poll-url';
import { type ResultContext } from './result-facts';
import { readStateIfStated, readingFor } from './state';

/** What a status interpretation knows besides the answer: the job, the poll URL in use and its reading. */
export interface StatusContext extends ResultContext {
  /** The poll URL this answer came from. */
  statusUrl?: string;
  /** The reading of that poll URL (`status.readings`); the status section's rules when absent. */
  pollReading?: string;
}

/**
 * Interprets a status answer (P1, P6-P8): the state and its category, progress in [0, 1], the provider's
 * timestamp, expiry and raw hints, the provider error of a failed job, the result reference of a successful one,
 * and, on a pending answer, a new poll URL where the current one came from (V1).
 */
export function interpretStatus(
  contract: ProviderContract,
  answer: ProviderAnswer,
  context: StatusContext = {},
): Observation {
  const reading = readingFor(contract, context.pollReading);
  const opened = openAnswer(contract, 'status', answer, context.jobId, reading.format);
  if (opened.kind === 'finished') return opened.observation;
  const { observation, json, problems, flags } = opened;
  const state = readJobDocument(
    contract,
    observation,
    { status: answer.status, json },
    reading,
    context,
    problems,
    flags,
  );
  if (state.category === 'pending') {
    const current =
      context.statusUrl === undefined
        ? undefined
        : { url: context.statusUrl, ...(context.pollReading !== undefined ? { reading: context.pollReading } : {}) };
    const next = followedPollUrl({ contract, answer, json, problems, flags }, current);
    if (next !== undefined) observation.statusUrl = next;
  }
  return finish(observation, problems, flags);
}

/**
 * Interprets a cancel answer (X1): the HTTP outcome and, when the answer states one, the job's state (a `409`
 * with the job's final view, a `202 cancelling`). A 2xx outside `cancel.acceptedStatuses` is `http_unexpected`;
 * a `501` or `405` is the signal `unsupported` (the provider does not support cancel for this job). The answer never
 * proves the job is cancelled (M1): only a later status read does.
 */
export function interpretCancel(
  contract: ProviderContract,
  answer: ProviderAnswer,
  context: { jobId?: string } = {},
): Observation {
  const accepted = contract.cancel?.acceptedStatuses.includes(answer.status) ?? false;
  const observation = accepted ? baseObservation(contract, 'cancel', answer) : errorAnswer(contract, 'cancel', answer);
  if (context.jobId !== undefined) observation.remoteJobId = cut(context.jobId, 500);
  const body = readBody(answer);
  if (body.ok && isPlainJsonObject(body.json)) {
    const problems = new Problems();
    const state = readStateIfStated(readingFor(contract, undefined), answer.status, body.json, problems);
    if (state.remoteState !== undefined) observation.remoteState = state.remoteState;
    if (state.category !== undefined) observation.category = state.category;
    if (accepted && !problems.empty) observation.parseProblem = problems.render();
  } else if (accepted && !body.ok) {
    observation.parseProblem = body.problem;
  }
  return observation;
}
