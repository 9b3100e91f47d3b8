/**
 * Interpreting the answer to a create request (C2, C3, H2, V1, V2, V5): the job ID and the poll URL (the job is
 * known by either), the state when the contract reads one from the create answer (never ended by its HTTP status
 * alone when the poll URL names a status monitor), and what later result sources need from this exchange. Pure.
 */
import { type Observation } from '../../../core/observation';
import { type Action } from '../../../core/journal';
import { type ProviderContract, type Reading, type ResultSource } from '../contract';
import { resolveOnOrigin } from '../urls';
import {
  Problems,
  baseObservation,
  describeSource,
  errorAnswer,
  finish,
  header,
  readBody,
  readSources,
  type InterpretFlags,
  type ProviderAnswer,
} from './answer';
import { readJobDocument } from './job-document';
import { namesMonitor, readPollUrl, type FoundPollUrl } from './poll-url';
import { createHeaderNames, type ResultContext } from './result-facts';
import { categoryByStatus, readingFor } from './state';

/** What the create interpretation knows about the request besides the answer. */
export interface CreateContext {
  /** The URL the create request was sent to (the `request_url` poll and result source). */
  requestUrl?: string;
  /** The operation's variables as recorded, for a result request template that names them. */
  variables?: Readonly<Record<string, string>>;
}

/** The URLs later result sources may need (V2): the request URL and the create answer's named headers, on the origin. */
function createUrlsOf(
  contract: ProviderContract,
  answer: ProviderAnswer,
  requestUrl: string | undefined,
): Observation['createUrls'] {
  const headers: Record<string, string> = {};
  for (const name of createHeaderNames(contract)) {
    const value = header(answer, name);
    if (value === undefined) continue;
    const resolved = resolveOnOrigin(contract.baseUrl, value, name);
    if (resolved.ok) headers[name] = resolved.url;
  }
  const urls = {
    ...(requestUrl !== undefined ? { request: requestUrl } : {}),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  };
  return Object.keys(urls).length > 0 ? urls : undefined;
}

function readJobId(
  contract: ProviderContract,
  answer: ProviderAnswer,
  json: unknown,
  observation: Observation,
  problems: Problems,
): void {
  const sources = contract.create.jobId;
  if (sources === undefined) return;
  const jobId = readSources(sources, answer, json, contract);
  if (jobId.kind === 'found') {
    if (jobId.value.length > 500)
      problems.add(`the job ID from ${describeSource(jobId.source)} is longer than 500 characters`);
    else observation.remoteJobId = jobId.value;
  } else if (jobId.kind === 'mistyped') problems.add(jobId.problem);
}

/** C3, legacy form: a synchronous success whose result is a field of the create answer. */
function synchronousResultSources(contract: ProviderContract, status: number): ResultSource[] | undefined {
  const rules = contract.create.synchronousSuccess;
  return rules !== undefined && rules.statuses.includes(status)
    ? [{ from: 'inline', field: rules.resultField }]
    : undefined;
}

/**
 * Interprets the answer to a create request. A 2xx outside `create.acceptedStatuses` and
 * `synchronousSuccess.statuses` is `http_unexpected`. An accepted answer is known by its job ID or its poll URL
 * (C2, V1); one naming neither proves nothing and has a `parseProblem`, unless it states a final state itself.
 */
export function interpretCreate(
  contract: ProviderContract,
  answer: ProviderAnswer,
  action: Action = 'create',
  context: CreateContext = {},
): Observation {
  const rules = contract.create;
  const syncSources = synchronousResultSources(contract, answer.status);
  if (!rules.acceptedStatuses.includes(answer.status) && syncSources === undefined) {
    return errorAnswer(contract, action, answer);
  }
  const observation = baseObservation(contract, action, answer);
  const problems = new Problems();
  const flags: InterpretFlags = { foreign: false };
  const body = readBody(answer, rules.format);
  if (!body.ok) problems.add(body.problem);
  const json = body.ok ? body.json : undefined;
  const createUrls = createUrlsOf(contract, answer, context.requestUrl);
  if (createUrls !== undefined) observation.createUrls = createUrls;

  readJobId(contract, answer, json, observation, problems);
  // A poll URL's problems matter only if the job must be polled: a final answer needs none (V1).
  const pollProblems = new Problems();
  const pollFlags: InterpretFlags = { foreign: false };
  const pollUrl = readPollUrl({ contract, answer, json, problems: pollProblems, flags: pollFlags }, context.requestUrl);
  if (pollUrl.kind === 'found') {
    observation.statusUrl = pollUrl.pollUrl.url;
    if (pollUrl.pollUrl.reading !== undefined) observation.pollReading = pollUrl.pollUrl.reading;
  }
  if (!problems.empty) return finish(observation, problems, flags);

  if (rules.readState !== false) {
    const resultContext: ResultContext = {
      ...(observation.remoteJobId !== undefined ? { jobId: observation.remoteJobId } : {}),
      ...(context.requestUrl !== undefined ? { requestUrl: context.requestUrl } : {}),
      ...(context.variables !== undefined ? { variables: context.variables } : {}),
      ...(createUrls?.headers !== undefined ? { createHeaders: createUrls.headers } : {}),
    };
    readJobDocument(
      contract,
      observation,
      { status: answer.status, json },
      createReading(contract, answer.status, syncSources, {
        monitor: pollUrl.kind !== 'absent' && namesMonitor(contract, pollUrl.source),
        pollable: pollable(contract, observation, pollUrl.kind),
      }),
      resultContext,
      problems,
      flags,
    );
  } else if (problems.empty) {
    // Accepted with no state in the answer: the job exists and is not final yet.
    observation.category = 'pending';
  }
  if (isFinal(observation) && !pollProblems.empty) {
    observation.note = `the answer is final; its unusable poll URL was ignored (${pollProblems.render() ?? ''})`.slice(
      0,
      500,
    );
  } else {
    for (const problem of pollProblems.list) problems.add(problem);
    if (pollFlags.foreign) flags.foreign = true;
    if (pollFlags.foreign) {
      // C4: a job whose only way forward points elsewhere proves nothing here.
      delete observation.category;
      return finish(observation, problems, flags);
    }
  }
  checkIdentified(contract, observation, pollUrl.kind, problems);
  return finish(observation, problems, flags);
}

/**
 * The reading the create answer is read with: the contract's (with the synchronous result sources, C3), except
 * when the answer states no state word. Then it is pending when its poll URL names a status monitor (V5: only
 * the monitor says when the job is done, so the create answer's HTTP status alone ends nothing), and when it
 * names a job that can be polled and its HTTP status means nothing by itself (C2: the state is unknown until
 * the first status read). A state word, or an AIP-151 derivation, is read as always: a terminal one ends the
 * job there.
 */
function createReading(
  contract: ProviderContract,
  status: number,
  syncSources: ResultSource[] | undefined,
  poll: { monitor: boolean; pollable: boolean },
): Reading {
  const readState = contract.create.readState;
  const reading = readingFor(contract, typeof readState === 'string' ? readState : undefined);
  const withResult = syncSources === undefined ? reading : { ...reading, result: syncSources };
  const pendingWithoutState = poll.monitor || (poll.pollable && categoryByStatus(reading, status) === undefined);
  return pendingWithoutState ? { ...withResult, whenNoState: { pending: [status] } } : withResult;
}

/** Whether the job can be found again (C2, V1): by its job ID with a status path, or by its poll URL. */
function pollable(contract: ProviderContract, observation: Observation, pollUrl: FoundPollUrl['kind']): boolean {
  return (observation.remoteJobId !== undefined && contract.status.path !== undefined) || pollUrl === 'found';
}

function isFinal(observation: Observation): boolean {
  return observation.category !== undefined && observation.category !== 'pending' && observation.category !== 'unknown';
}

/**
 * C2, V1: a job that is not final must be findable again: by its job ID (with a status path), or by its poll URL.
 * A final answer (a synchronous success or failure) needs neither.
 */
function checkIdentified(
  contract: ProviderContract,
  observation: Observation,
  pollUrl: FoundPollUrl['kind'],
  problems: Problems,
): void {
  if (isFinal(observation) || pollUrl === 'problem' || pollable(contract, observation, pollUrl)) return;
  const named = [
    ...(contract.create.jobId ?? []).map(describeSource),
    ...(contract.create.statusUrl ?? []).map(describeSource),
  ];
  problems.add(`no job ID in the answer (${[...new Set(named)].join(', ')} missing)`);
  delete observation.category;
}
