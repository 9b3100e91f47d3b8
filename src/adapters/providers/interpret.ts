/**
 * Pure interpretation of a provider's HTTP answer into an {@link Observation} (no I/O, no clock): the adapter
 * classifies, the core judges. Conventions every consumer relies on:
 * - `category` is present exactly when the provider's state was read and looked up in the state table (P1);
 *   a state outside the table is `unknown`.
 * - `parseProblem` lists everything in a 2xx answer that could not be used (not JSON, an HTML page, a missing
 *   or mistyped field, a URL on another origin). A consumer never takes a transition that depends on a field
 *   named there (a success with a `parseProblem` about the result reference is not ready, P7).
 * - A non-2xx answer is an HTTP fact (P6): `httpStatus`, `errorCategory` (`auth_denied` 401/403, `not_found`
 *   404, `rate_limited` 429, `http_4xx`, `http_5xx`, `http_unexpected`), `retryAfter` and `providerError`; its
 *   body is never required to parse.
 * - `errorCategory: 'foreign_origin'` marks a URL in the answer that pointed elsewhere (C4); it is dropped.
 * Every string is cut to the observation schema's limits.
 */
import { type Observation, type RemoteStateCategory, type ResultReference } from '../../core/observation';
import { categorize } from '../../core/provider-states';
import { type Action } from '../../core/journal';
import { type ProviderContract, type ValueSource } from './contract';
import { readField } from './field-path';
import { expandTemplate, resolveOnOrigin } from './urls';

/** An HTTP answer as the HTTP layer hands it over (headers lower-cased; body already parsed or not). */
export interface ProviderAnswer {
  status: number;
  /** Lower-cased header names. */
  headers: Readonly<Record<string, string>>;
  /** The body parsed as JSON, when it was JSON. */
  bodyJson?: unknown;
  /** The body as text (possibly cut off), when it was not JSON or could not be parsed. */
  bodyText?: string;
  /** Why the body could not be parsed as JSON (truncated, syntax error...). */
  bodyParseError?: string;
  /** When the answer arrived, epoch ms. */
  receivedAtMs: number;
  durationMs?: number;
  /** The provider's request ID if the HTTP layer already extracted it; else read from `requestIdHeader`. */
  providerRequestId?: string;
}

/** One job found by reconciliation (U2). */
export interface ReconcileMatch {
  remoteJobId: string;
  remoteState?: string;
  category?: RemoteStateCategory;
  createdAt?: string;
}

/** What the reconciliation looked for: our operation ID (client reference) and the idempotency token. */
export interface ReconcileContext {
  clientReference?: string;
  token?: string;
}

/** What {@link interpretReconcile} returns: the observation and every matching job (more than one is U3). */
export interface ReconcileInterpretation {
  observation: Observation;
  matches: ReconcileMatch[];
}

/** Integrity data read from a result answer's headers (R2), with the problems found. */
export interface ResultIntegrity {
  /** Lower-case hex. */
  sha256?: string;
  sizeBytes?: number;
  recordCount?: number;
  contentType?: string;
  /** False when the contract lists expected content types and the answer's is not one of them. */
  contentTypeAccepted: boolean;
  problems: string[];
}

/** R3: the per-item count of a batch result. */
export interface BatchCount {
  total: number;
  succeeded: number;
  failed: number;
  /** The failed items' IDs (at most 10,000; `failedIdsTruncated` says when more failed). */
  failedItemIds: string[];
  failedIdsTruncated: boolean;
  problems: string[];
}

const MAX_PROBLEM = 2000;
const MAX_MATCHES = 1000;
const MAX_FAILED_IDS = 10_000;

function cut(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}

function isPlainJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Collects problems and renders them into one bounded `parseProblem`. */
class Problems {
  readonly list: string[] = [];
  add(problem: string): void {
    this.list.push(problem);
  }
  get empty(): boolean {
    return this.list.length === 0;
  }
  render(): string | undefined {
    return this.empty ? undefined : cut(this.list.join('; '), MAX_PROBLEM);
  }
}

function header(answer: { headers: Readonly<Record<string, string>> }, name: string): string | undefined {
  const value = answer.headers[name.toLowerCase()];
  return value === undefined || value === '' ? undefined : value;
}

function baseObservation(contract: ProviderContract, action: Action, answer: ProviderAnswer): Observation {
  const observation: Observation = { action, transport: 'response', receivedAtMs: answer.receivedAtMs, httpStatus: answer.status };
  if (answer.durationMs !== undefined) observation.durationMs = answer.durationMs;
  const requestId = answer.providerRequestId ?? header(answer, contract.requestIdHeader);
  if (requestId !== undefined) observation.providerRequestId = cut(requestId, 500);
  const retryAfter = header(answer, 'retry-after');
  if (retryAfter !== undefined) observation.retryAfter = cut(retryAfter, 200);
  return observation;
}

function httpErrorCategory(status: number): string {
  if (status === 401 || status === 403) return 'auth_denied';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status >= 400 && status < 500) return 'http_4xx';
  if (status >= 500) return 'http_5xx';
  return 'http_unexpected';
}

type Body = { ok: true; json: unknown } | { ok: false; problem: string };

/** The JSON body of an answer, or why there is none usable. An empty body is `{ ok: true, json: undefined }`. */
function readBody(answer: ProviderAnswer): Body {
  const contentType = (header(answer, 'content-type') ?? '').toLowerCase();
  if (answer.bodyJson !== undefined && answer.bodyParseError === undefined) return { ok: true, json: answer.bodyJson };
  const text = answer.bodyText ?? '';
  if (contentType.includes('text/html') || /^\s*<(!doctype|html)/i.test(text)) {
    return { ok: false, problem: 'the answer is an HTML page, not JSON' };
  }
  if (answer.bodyParseError !== undefined) return { ok: false, problem: `the body is not valid JSON (${cut(answer.bodyParseError, 200)})` };
  if (text.trim() !== '') return { ok: false, problem: `the body is not JSON${contentType === '' ? '' : ` (${cut(contentType, 100)})`}` };
  return { ok: true, json: undefined };
}

function readProviderError(contract: ProviderContract, json: unknown): Observation['providerError'] {
  if (contract.providerError === undefined || json === undefined) return undefined;
  const out: NonNullable<Observation['providerError']> = {};
  if (contract.providerError.codeField !== undefined) {
    const code = readField(json, contract.providerError.codeField);
    if (code.found && (typeof code.value === 'string' || typeof code.value === 'number')) out.code = cut(String(code.value), 200);
  }
  if (contract.providerError.messageField !== undefined) {
    const message = readField(json, contract.providerError.messageField);
    if (message.found && typeof message.value === 'string') out.message = cut(message.value, 2000);
  }
  return out.code === undefined && out.message === undefined ? undefined : out;
}

/** The provider error of a non-2xx answer: its error fields, else a short note on what the body was. */
function errorAnswerProviderError(contract: ProviderContract, answer: ProviderAnswer): Observation['providerError'] {
  const body = readBody(answer);
  if (body.ok) return readProviderError(contract, body.json);
  if (body.problem.includes('HTML')) return { message: 'an HTML error page' };
  const text = (answer.bodyText ?? '').trim();
  return text === '' ? undefined : { message: cut(text, 500) };
}

function applyExtract(value: string, extract: 'whole' | 'last_path_segment', stripPrefix: string | undefined, baseUrl: string): string | undefined {
  let out = value;
  if (extract === 'last_path_segment') {
    let pathname: string;
    try {
      pathname = new URL(value, baseUrl).pathname;
    } catch {
      return undefined;
    }
    const segment = pathname.split('/').filter((s) => s !== '').pop();
    if (segment === undefined) return undefined;
    try {
      out = decodeURIComponent(segment);
    } catch {
      return undefined;
    }
  }
  if (stripPrefix !== undefined && out.startsWith(stripPrefix)) out = out.slice(stripPrefix.length);
  return out === '' ? undefined : out;
}

function describeSource(source: ValueSource): string {
  return source.from === 'body' ? `body field ${source.field}` : `header ${source.name}`;
}

type SourceRead = { kind: 'found'; value: string; source: ValueSource } | { kind: 'absent' } | { kind: 'mistyped'; problem: string };

/** Reads the first present source. A present but mistyped value is a problem, never skipped silently. */
function readSources(sources: readonly ValueSource[], answer: ProviderAnswer, json: unknown, contract: ProviderContract, transform: boolean): SourceRead {
  for (const source of sources) {
    let raw: unknown;
    if (source.from === 'header') {
      raw = header(answer, source.name);
      if (raw === undefined) continue;
    } else {
      const read = readField(json, source.field);
      if (!read.found || read.value === null) continue;
      raw = read.value;
    }
    if (typeof raw === 'number' && Number.isSafeInteger(raw)) raw = String(raw);
    if (typeof raw !== 'string') return { kind: 'mistyped', problem: `${describeSource(source)} is not a string` };
    if (raw === '') continue;
    const value = transform ? applyExtract(raw, source.extract, source.stripPrefix, contract.baseUrl) : raw;
    if (value === undefined) return { kind: 'mistyped', problem: `${describeSource(source)} holds no usable value` };
    return { kind: 'found', value, source };
  }
  return { kind: 'absent' };
}

interface StateRead {
  remoteState?: string;
  category?: RemoteStateCategory;
}

/** Reads and classifies the state of one job document with the contract's status rules (P1, LRO derivation). */
function readState(contract: ProviderContract, json: unknown, problems: Problems): StateRead {
  const rules = contract.status;
  let word: string | undefined;
  let stateProblem: string | undefined;
  if (rules.stateField !== undefined) {
    const read = readField(json, rules.stateField);
    if (!read.found || read.value === null) stateProblem = `field ${rules.stateField} is missing`;
    else if (typeof read.value === 'string') word = read.value;
    else {
      stateProblem = `field ${rules.stateField} is not a string`;
      problems.add(stateProblem);
    }
  }
  const remoteState = word === undefined ? undefined : cut(word, 500);
  if (rules.derive === undefined) {
    if (word === undefined) {
      if (stateProblem !== undefined && !problems.list.includes(stateProblem)) problems.add(stateProblem);
      return {};
    }
    return { remoteState, category: categorize(rules.stateTable, word) };
  }
  const derive = rules.derive;
  const done = readField(json, derive.doneField);
  // AIP-151: an absent `done` means false.
  if (done.found && typeof done.value !== 'boolean') {
    problems.add(`field ${derive.doneField} is not a boolean`);
    return { remoteState };
  }
  const isDone = done.found && done.value === true;
  const error = readField(json, derive.errorField);
  const response = readField(json, derive.responseField);
  const hasError = error.found && error.value !== null;
  const hasResponse = response.found && response.value !== null;
  if (!isDone) {
    if (hasError || hasResponse) return { remoteState: remoteState ?? 'not_done', category: 'unknown' };
    if (word === undefined) return { remoteState: 'not_done', category: 'pending' };
    const category = categorize(rules.stateTable, word);
    // A final word while `done` is false is a contradiction (P7): unknown, escalated by the core.
    return { remoteState, category: category === 'pending' ? 'pending' : 'unknown' };
  }
  if (hasError && hasResponse) {
    problems.add(`both ${derive.errorField} and ${derive.responseField} are set on a done operation`);
    return { remoteState: remoteState ?? 'done', category: 'unknown' };
  }
  if (hasError) {
    if (!isPlainJsonObject(error.value)) problems.add(`field ${derive.errorField} is not an object`);
    const cancelled =
      derive.cancelledWhen !== undefined &&
      (() => {
        const marker = readField(json, derive.cancelledWhen.field);
        return marker.found && derive.cancelledWhen.values.some((v) => v === marker.value);
      })();
    return { remoteState: remoteState ?? (cancelled ? 'done:cancelled' : 'done:error'), category: cancelled ? 'cancelled' : 'failure' };
  }
  if (hasResponse) return { remoteState: remoteState ?? 'done:response', category: 'success' };
  problems.add(`a done operation has neither ${derive.errorField} nor ${derive.responseField}`);
  return { remoteState: remoteState ?? 'done', category: 'unknown' };
}

function readTimestampField(json: unknown, field: string | undefined, problems: Problems): string | undefined {
  if (field === undefined) return undefined;
  const read = readField(json, field);
  if (!read.found || read.value === null) return undefined;
  if (typeof read.value !== 'string') {
    problems.add(`field ${field} is not a string`);
    return undefined;
  }
  if (read.value.length > 100) {
    problems.add(`field ${field} is longer than 100 characters`);
    return undefined;
  }
  return read.value;
}

function readHint(json: unknown, field: string | undefined): unknown {
  if (field === undefined) return undefined;
  const read = readField(json, field);
  if (!read.found) return undefined;
  const value = read.value;
  if (typeof value === 'string') return cut(value, 200);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  // Kept as a marker of its type so the planner rejects it with a reason (P3).
  return `[${Array.isArray(value) ? 'array' : typeof value}]`;
}

function toNonNegativeInteger(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\d{1,15}$/.test(value)) return Number(value);
  return undefined;
}

/** Normalises a SHA-256 given as hex or base64 to lower-case hex, or undefined when it is not 32 bytes. */
export function normaliseSha256(value: string, encoding: 'hex' | 'base64'): string | undefined {
  if (encoding === 'hex') return /^[0-9a-fA-F]{64}$/.test(value) ? value.toLowerCase() : undefined;
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) return undefined;
  const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === 32 ? bytes.toString('hex') : undefined;
}

function inlineResult(contract: ProviderContract, value: unknown, field: string, problems: Problems): unknown {
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text ?? '', 'utf8');
  if (bytes > contract.result.maxInlineBytes) {
    problems.add(`the inline result in ${field} is ${bytes} bytes, more than maxInlineBytes ${contract.result.maxInlineBytes}`);
    return undefined;
  }
  return value;
}

/** Reads the result reference of a successful job document (R1, R2): URL (origin-checked) and integrity fields. */
function readResultReference(contract: ProviderContract, json: unknown, jobId: string | undefined, problems: Problems, flags: { foreign: boolean }): ResultReference | undefined {
  const rules = contract.result;
  const reference: ResultReference = {};
  for (const source of rules.url) {
    if (source.from === 'template') {
      const expanded = expandTemplate(contract.baseUrl, source.path, { jobId });
      if (!expanded.ok) continue;
      reference.url = cut(expanded.url, 4000);
      break;
    }
    const read = readField(json, source.field);
    if (!read.found || read.value === null) continue;
    if (typeof read.value !== 'string' || read.value === '') {
      problems.add(`field ${source.field} is not a URL string`);
      break;
    }
    const resolved = resolveOnOrigin(contract.baseUrl, read.value, `the result URL in ${source.field}`);
    if (!resolved.ok) {
      problems.add(resolved.problem);
      if (resolved.errorCategory === 'foreign_origin') flags.foreign = true;
      break;
    }
    reference.url = cut(resolved.url, 4000);
    break;
  }
  if (reference.url === undefined && rules.required && !problems.list.some((p) => p.includes('result URL') || p.includes('not a URL'))) {
    const named = rules.url.map((s) => (s.from === 'template' ? `template ${s.path}` : `field ${s.field}`)).join(', ');
    problems.add(`a successful job without a result reference (${named}) is not ready (P7)`);
  }
  if (rules.sha256?.from === 'status_field') {
    const read = readField(json, rules.sha256.field);
    if (read.found && read.value !== null) {
      const hex = typeof read.value === 'string' ? normaliseSha256(read.value, rules.sha256.encoding) : undefined;
      if (hex === undefined) problems.add(`field ${rules.sha256.field} is not a ${rules.sha256.encoding} SHA-256`);
      else reference.sha256 = hex;
    }
  }
  for (const [key, source] of [
    ['sizeBytes', rules.sizeBytes],
    ['recordCount', rules.recordCount],
  ] as const) {
    if (source?.from !== 'status_field') continue;
    const read = readField(json, source.field);
    if (!read.found || read.value === null) continue;
    const n = toNonNegativeInteger(read.value);
    if (n === undefined) problems.add(`field ${source.field} is not a non-negative integer`);
    else reference[key] = n;
  }
  return Object.keys(reference).length === 0 ? undefined : reference;
}

/** Fills the observation from one job document (status answer, or a create answer read with the status rules). */
function readJobDocument(contract: ProviderContract, observation: Observation, json: unknown, jobId: string | undefined, problems: Problems, flags: { foreign: boolean }): void {
  const state = readState(contract, json, problems);
  if (state.remoteState !== undefined) observation.remoteState = state.remoteState;
  if (state.category !== undefined) observation.category = state.category;
  const rules = contract.status;
  if (rules.progress !== undefined) {
    const read = readField(json, rules.progress.field);
    if (read.found && read.value !== null) {
      const raw = read.value;
      const value = typeof raw === 'number' && Number.isFinite(raw) ? (rules.progress.scale === 'percent' ? raw / 100 : raw) : undefined;
      if (value === undefined || value < 0 || value > 1) problems.add(`field ${rules.progress.field} is not a ${rules.progress.scale === 'percent' ? 'number in 0..100' : 'number in 0..1'}`);
      else observation.progress = value;
    }
  }
  const timestamp = readTimestampField(json, rules.providerTimestampField, problems);
  if (timestamp !== undefined) observation.providerTimestamp = timestamp;
  const expiresAt = readTimestampField(json, rules.expiresAtField, problems);
  if (expiresAt !== undefined) observation.expiresAt = expiresAt;
  const pollAfterSeconds = readHint(json, rules.hints?.pollAfterSecondsField);
  const nextCheckAt = readHint(json, rules.hints?.nextCheckAtField);
  if (pollAfterSeconds !== undefined || nextCheckAt !== undefined) {
    observation.hints = {};
    if (pollAfterSeconds !== undefined) observation.hints.pollAfterSeconds = pollAfterSeconds;
    if (nextCheckAt !== undefined) observation.hints.nextCheckAt = nextCheckAt;
  }
  if (state.category === 'failure' || state.category === 'cancelled' || state.category === 'expired' || state.category === 'unknown') {
    const providerError = readProviderError(contract, json);
    if (providerError !== undefined) observation.providerError = providerError;
  }
  if (state.category === 'success') {
    const reference = readResultReference(contract, json, jobId, problems, flags);
    if (reference !== undefined) observation.resultReference = reference;
  }
}

function finish(observation: Observation, problems: Problems, flags: { foreign: boolean }): Observation {
  const parseProblem = problems.render();
  if (parseProblem !== undefined) observation.parseProblem = parseProblem;
  if (flags.foreign) observation.errorCategory = 'foreign_origin';
  return observation;
}

function isSuccessStatus(status: number): boolean {
  return status >= 200 && status < 300;
}

/** The observation of a non-2xx (or unexpected) answer: an HTTP fact, never a job fact (P6). */
function errorAnswer(contract: ProviderContract, action: Action, answer: ProviderAnswer, category = httpErrorCategory(answer.status)): Observation {
  const observation = baseObservation(contract, action, answer);
  observation.errorCategory = category;
  const providerError = errorAnswerProviderError(contract, answer);
  if (providerError !== undefined) observation.providerError = providerError;
  return observation;
}

/**
 * Interprets the answer to a create request (C2, C3, H2): the job ID, the status URL (origin-checked, C4), and
 * the initial state. A 2xx outside `create.acceptedStatuses`/`synchronousSuccess.statuses` is `http_unexpected`.
 * An accepted answer without a job ID has a `parseProblem` and no category: it proves nothing (C2).
 */
export function interpretCreate(contract: ProviderContract, answer: ProviderAnswer, action: Action = 'create'): Observation {
  const rules = contract.create;
  const synchronous = rules.synchronousSuccess?.statuses.includes(answer.status) ?? false;
  if (!rules.acceptedStatuses.includes(answer.status) && !synchronous) {
    return errorAnswer(contract, action, answer, isSuccessStatus(answer.status) ? 'http_unexpected' : httpErrorCategory(answer.status));
  }
  const observation = baseObservation(contract, action, answer);
  const problems = new Problems();
  const flags = { foreign: false };
  const body = readBody(answer);
  if (!body.ok) problems.add(body.problem);
  const json = body.ok ? body.json : undefined;
  if (body.ok && json !== undefined && !isPlainJsonObject(json)) problems.add('the body is not a JSON object');

  const jobId = readSources(rules.jobId, answer, json, contract, true);
  if (jobId.kind === 'found') {
    if (jobId.value.length > 500) problems.add(`the job ID from ${describeSource(jobId.source)} is longer than 500 characters`);
    else observation.remoteJobId = jobId.value;
  } else if (jobId.kind === 'mistyped') {
    problems.add(jobId.problem);
  } else {
    problems.add(`no job ID in the answer (${rules.jobId.map(describeSource).join(', ')} missing)`);
  }
  if (rules.statusUrl !== undefined) {
    const statusUrl = readSources(rules.statusUrl, answer, json, contract, false);
    if (statusUrl.kind === 'found') {
      const resolved = resolveOnOrigin(contract.baseUrl, statusUrl.value, `the status URL in ${describeSource(statusUrl.source)}`);
      if (resolved.ok) observation.statusUrl = cut(resolved.url, 4000);
      else {
        problems.add(resolved.problem);
        if (resolved.errorCategory === 'foreign_origin') flags.foreign = true;
      }
    } else if (statusUrl.kind === 'mistyped') {
      problems.add(statusUrl.problem);
    } else if (contract.status.path === undefined) {
      problems.add(`no status URL in the answer (${rules.statusUrl.map(describeSource).join(', ')} missing)`);
    }
  }
  if (observation.remoteJobId === undefined || flags.foreign) return finish(observation, problems, flags);

  if (rules.readState && json !== undefined) {
    readJobDocument(contract, observation, json, observation.remoteJobId, problems, flags);
  } else if (problems.empty) {
    // Accepted with a job ID and no state in the answer: the job exists and is not final yet.
    observation.category = 'pending';
  }
  if (synchronous && rules.synchronousSuccess !== undefined && observation.category === 'success') {
    const result = readField(json, rules.synchronousSuccess.resultField);
    if (!result.found) problems.add(`a synchronous success without its result field ${rules.synchronousSuccess.resultField}`);
    else {
      const inline = inlineResult(contract, result.value, rules.synchronousSuccess.resultField, problems);
      if (inline !== undefined) {
        observation.resultReference = { ...(observation.resultReference ?? {}), inline };
        // The inline result is the reference; a missing URL is not a problem on this path (C3).
        const missing = problems.list.findIndex((p) => p.includes('without a result reference'));
        if (missing >= 0) problems.list.splice(missing, 1);
      }
    }
  }
  return finish(observation, problems, flags);
}

/**
 * Interprets a status answer (P1, P6-P8): the state and its category, progress in [0, 1], the provider's
 * timestamp, expiry and raw hints, the provider error of a failed job, and the result reference of a successful
 * one. `jobId` is the job being read (for the result template).
 */
export function interpretStatus(contract: ProviderContract, answer: ProviderAnswer, context: { jobId?: string } = {}): Observation {
  if (!isSuccessStatus(answer.status)) {
    const observation = errorAnswer(contract, 'status', answer);
    if (context.jobId !== undefined) observation.remoteJobId = cut(context.jobId, 500);
    return observation;
  }
  const observation = baseObservation(contract, 'status', answer);
  if (context.jobId !== undefined) observation.remoteJobId = cut(context.jobId, 500);
  const problems = new Problems();
  const flags = { foreign: false };
  const body = readBody(answer);
  if (!body.ok) problems.add(body.problem);
  else if (!isPlainJsonObject(body.json)) problems.add(body.json === undefined ? 'the status answer has no body' : 'the body is not a JSON object');
  else readJobDocument(contract, observation, body.json, context.jobId, problems, flags);
  return finish(observation, problems, flags);
}

/**
 * Interprets a cancel answer (X1): the HTTP outcome and, when the answer states one, the job's state (a `409
 * already_terminal` with its final state, a `202 cancelling`). A 2xx outside `cancel.acceptedStatuses` is
 * `http_unexpected`. The answer never proves the job is cancelled (M1): only a later status read does.
 */
export function interpretCancel(contract: ProviderContract, answer: ProviderAnswer, context: { jobId?: string } = {}): Observation {
  const accepted = contract.cancel?.acceptedStatuses.includes(answer.status) ?? false;
  const observation = accepted
    ? baseObservation(contract, 'cancel', answer)
    : errorAnswer(contract, 'cancel', answer, isSuccessStatus(answer.status) ? 'http_unexpected' : httpErrorCategory(answer.status));
  if (context.jobId !== undefined) observation.remoteJobId = cut(context.jobId, 500);
  const body = readBody(answer);
  if (body.ok && isPlainJsonObject(body.json)) {
    const problems = new Problems();
    const state = readStateIfStated(contract, body.json, problems);
    if (state.remoteState !== undefined) observation.remoteState = state.remoteState;
    if (state.category !== undefined) observation.category = state.category;
    if (accepted && !problems.empty) observation.parseProblem = problems.render();
  } else if (accepted && !body.ok) {
    observation.parseProblem = body.problem;
  }
  return observation;
}

/** Reads the state only when the document states one (a cancel answer may be `{}`). */
function readStateIfStated(contract: ProviderContract, json: unknown, problems: Problems): StateRead {
  const rules = contract.status;
  const stated =
    (rules.stateField !== undefined && readField(json, rules.stateField).found) || (rules.derive !== undefined && readField(json, rules.derive.doneField).found);
  return stated ? readState(contract, json, problems) : {};
}

/**
 * Interprets a reconciliation answer (U2). For `list_by_client_reference` and `lookup_by_token`, every listed
 * job that matches (when the contract names a `matchField`, it must equal the client reference, or the token for
 * `lookup_by_token`; without that value nothing matches) with its state; the
 * observation names the job when exactly one matched, and has `errorCategory: 'multiple_matches'` when several
 * did (U3: a human decides). For `same_token_resend` the answer is a create answer. For `none`, an observation
 * with `errorCategory: 'reconcile_unsupported'`.
 */
export function interpretReconcile(contract: ProviderContract, answer: ProviderAnswer, context: ReconcileContext = {}): ReconcileInterpretation {
  const method = contract.reconciliation;
  if (method.method === 'none') {
    const observation = baseObservation(contract, 'reconcile', answer);
    observation.errorCategory = 'reconcile_unsupported';
    return { observation, matches: [] };
  }
  if (method.method === 'same_token_resend') {
    const observation = interpretCreate(contract, answer, 'reconcile');
    const matches: ReconcileMatch[] =
      observation.remoteJobId === undefined ? [] : [{ remoteJobId: observation.remoteJobId, remoteState: observation.remoteState, category: observation.category }];
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
      problems.add(`${method.listField}[${index}] has no usable job ID (${method.jobId.map((s) => s.field).join(', ')})`);
      return;
    }
    const itemProblems = new Problems();
    const state = readStateIfStated(contract, item, itemProblems);
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

/**
 * Reads the integrity data a result answer carries in its headers (R2) as the contract names them, normalising
 * the SHA-256 to lower-case hex. Pure; safe to repeat.
 */
export function readResultIntegrity(contract: ProviderContract, headers: Readonly<Record<string, string>>): ResultIntegrity {
  const rules = contract.result;
  const out: ResultIntegrity = { contentTypeAccepted: true, problems: [] };
  const get = (name: string): string | undefined => {
    const value = headers[name.toLowerCase()];
    return value === undefined || value === '' ? undefined : value;
  };
  if (rules.sha256?.from === 'result_header') {
    const value = get(rules.sha256.name);
    if (value !== undefined) {
      const hex = normaliseSha256(value.trim(), rules.sha256.encoding);
      if (hex === undefined) out.problems.push(`header ${rules.sha256.name} is not a ${rules.sha256.encoding} SHA-256`);
      else out.sha256 = hex;
    }
  }
  for (const [key, source] of [
    ['sizeBytes', rules.sizeBytes],
    ['recordCount', rules.recordCount],
  ] as const) {
    if (source?.from !== 'result_header') continue;
    const value = get(source.name);
    if (value === undefined) continue;
    const n = toNonNegativeInteger(value.trim());
    if (n === undefined) out.problems.push(`header ${source.name} is not a non-negative integer`);
    else out[key] = n;
  }
  const contentType = get('content-type');
  if (contentType !== undefined) out.contentType = cut(contentType, 200);
  if (rules.contentType !== undefined) {
    const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    out.contentTypeAccepted = rules.contentType.expected.some((expected) => expected.toLowerCase() === media);
    if (!out.contentTypeAccepted) out.problems.push(`content type ${media === '' ? '(none)' : cut(media, 100)} is not one of ${rules.contentType.expected.join(', ')}`);
  }
  return out;
}

/**
 * R3: counts the items of a batch result by the contract's `result.batch` rules, listing the failed items' IDs.
 * Returns undefined when the contract defines no batch shape. Pure; safe to repeat.
 */
export function countBatchItems(contract: ProviderContract, json: unknown): BatchCount | undefined {
  const rules = contract.result.batch;
  if (rules === undefined) return undefined;
  const out: BatchCount = { total: 0, succeeded: 0, failed: 0, failedItemIds: [], failedIdsTruncated: false, problems: [] };
  const items = readField(json, rules.itemsField);
  if (!items.found || !Array.isArray(items.value)) {
    out.problems.push(`field ${rules.itemsField} is ${items.found ? 'not an array' : 'missing'}`);
    return out;
  }
  items.value.forEach((item, index) => {
    out.total += 1;
    const status = readField(item, rules.statusField);
    const id = readField(item, rules.idField);
    const idText = id.found && (typeof id.value === 'string' || typeof id.value === 'number') ? cut(String(id.value), 500) : `#${index}`;
    if (!status.found || typeof status.value !== 'string') {
      out.problems.push(`${rules.itemsField}[${index}].${rules.statusField} is missing or not a string`);
      out.failed += 1;
    } else if (rules.failedValues.includes(status.value)) {
      out.failed += 1;
    } else {
      out.succeeded += 1;
      return;
    }
    if (out.failedItemIds.length < MAX_FAILED_IDS) out.failedItemIds.push(idText);
    else out.failedIdsTruncated = true;
  });
  if (out.problems.length > 100) out.problems = [...out.problems.slice(0, 100), `and ${out.problems.length - 100} more`];
  return out;
}
