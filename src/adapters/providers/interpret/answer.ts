/**
 * The parts of an HTTP answer every interpretation reads: the body as JSON (or why not), headers, the
 * provider's request ID and error, and values named by the contract's sources. Pure.
 */
import { type Observation } from '../../../core/observation';
export { MAX_URL_CHARS } from '../../../core/observation';
import { type Action } from '../../../core/journal';
import { readsBody, type AnswerFormat, type ProviderContract, type ValueSource } from '../contract';
import { readField } from '../field-path';
import { answerSignal, httpErrorCategory } from '../answer-signal';

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

const MAX_PROBLEM = 2000;

/** Shortens text for display and records; never used on a URL that will be requested. */
export function cut(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}

/** True for a JSON object (not an array, not null). */
export function isPlainJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Collects problems and renders them into one bounded `parseProblem`. */
export class Problems {
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

/** Whether the interpretation found a URL on another origin (C4): the observation is then marked `foreign_origin`. */
export interface InterpretFlags {
  foreign: boolean;
}

/** A header of the answer, `undefined` when absent or empty. */
export function header(answer: { headers: Readonly<Record<string, string>> }, name: string): string | undefined {
  const value = answer.headers[name.toLowerCase()];
  return value === undefined || value === '' ? undefined : value;
}

/** True for a 2xx status. */
function isSuccessStatus(status: number): boolean {
  return status >= 200 && status < 300;
}

/** The observation every answer starts from: action, status, request ID and Retry-After. */
export function baseObservation(contract: ProviderContract, action: Action, answer: ProviderAnswer): Observation {
  const observation: Observation = {
    action,
    transport: 'response',
    signal: answerSignal({ transport: 'response', httpStatus: answer.status }),
    receivedAtMs: answer.receivedAtMs,
    httpStatus: answer.status,
  };
  if (answer.durationMs !== undefined) observation.durationMs = answer.durationMs;
  const requestId = answer.providerRequestId ?? header(answer, contract.requestIdHeader);
  if (requestId !== undefined) observation.providerRequestId = cut(requestId, 500);
  const retryAfter = header(answer, 'retry-after');
  if (retryAfter !== undefined) observation.retryAfter = cut(retryAfter, 200);
  return observation;
}

/** The JSON body of an answer, or why there is none usable. An empty body is `{ ok: true, json: undefined }`. */
export type Body = { ok: true; json: unknown } | { ok: false; problem: string };

/**
 * Reads the answer's body as JSON (see {@link Body}) as the reading's `format` says (V6): a `text` or `binary` body
 * is never read (`{ ok: true, json: undefined }`: the HTTP status and headers decide); otherwise the HTTP layer's
 * JSON, or why there is none.
 */
export function readBody(answer: ProviderAnswer, format?: AnswerFormat): Body {
  if (!readsBody(format)) return { ok: true, json: undefined };
  const contentType = (header(answer, 'content-type') ?? '').toLowerCase();
  if (answer.bodyJson !== undefined && answer.bodyParseError === undefined) return { ok: true, json: answer.bodyJson };
  const text = answer.bodyText ?? '';
  if (contentType.includes('text/html') || /^\s*<(!doctype|html)/i.test(text)) {
    return { ok: false, problem: 'the answer is an HTML page, not JSON' };
  }
  if (answer.bodyParseError !== undefined)
    return { ok: false, problem: `the body is not valid JSON (${cut(answer.bodyParseError, 200)})` };
  if (text.trim() !== '')
    return { ok: false, problem: `the body is not JSON${contentType === '' ? '' : ` (${cut(contentType, 100)})`}` };
  return { ok: true, json: undefined };
}

function firstString(
  json: unknown,
  fields: readonly string[] | undefined,
  accept: (value: unknown) => boolean,
): string | undefined {
  for (const field of fields ?? []) {
    const read = readField(json, field);
    if (read.found && accept(read.value)) return String(read.value);
  }
  return undefined;
}

/** The provider's error code and message in a JSON document, from the first of the contract's fields present. */
export function readProviderError(contract: ProviderContract, json: unknown): Observation['providerError'] {
  if (contract.providerError === undefined || json === undefined) return undefined;
  const out: NonNullable<Observation['providerError']> = {};
  const code = firstString(
    json,
    contract.providerError.codeField,
    (v) => typeof v === 'string' || typeof v === 'number',
  );
  const message = firstString(json, contract.providerError.messageField, (v) => typeof v === 'string');
  if (code !== undefined) out.code = cut(code, 200);
  if (message !== undefined) out.message = cut(message, 2000);
  return out.code === undefined && out.message === undefined ? undefined : out;
}

/** The provider error of a non-2xx answer: its error fields, else a short note on what the body was. */
function errorAnswerProviderError(contract: ProviderContract, answer: ProviderAnswer): Observation['providerError'] {
  const body = readBody(answer);
  if (body.ok) return readProviderError(contract, body.json) ?? plainMessage(body.json);
  if (body.problem.includes('HTML')) return { message: 'an HTML error page' };
  const text = (answer.bodyText ?? '').trim();
  return text === '' ? undefined : { message: cut(text, 500) };
}

/** A message from a JSON error body the contract does not describe: `{ "message": ... }` or a bare string. */
function plainMessage(json: unknown): Observation['providerError'] {
  if (typeof json === 'string' && json.trim() !== '') return { message: cut(json, 500) };
  if (!isPlainJsonObject(json)) return undefined;
  const message = firstString(
    json,
    ['message', 'error.message', 'error_description', 'detail', 'title'],
    (v) => typeof v === 'string',
  );
  const code = firstString(
    json,
    ['code', 'error.code', 'error'],
    (v) => typeof v === 'string' || typeof v === 'number',
  );
  if (message === undefined && code === undefined) return undefined;
  return {
    ...(code !== undefined ? { code: cut(code, 200) } : {}),
    ...(message !== undefined ? { message: cut(message, 2000) } : {}),
  };
}

/** The observation of a non-2xx (or unexpected) answer: an HTTP fact, never a job fact (P6). */
export function errorAnswer(
  contract: ProviderContract,
  action: Action,
  answer: ProviderAnswer,
  category = httpErrorCategory(answer.status),
): Observation {
  const observation = baseObservation(contract, action, answer);
  const providerError = errorAnswerProviderError(contract, answer);
  observation.errorCategory = isRateLimitedCode(contract, providerError?.code) ? 'rate_limited' : category;
  observation.signal = answerSignal(observation);
  if (providerError !== undefined) observation.providerError = providerError;
  return observation;
}

/** H1: whether the provider's error code is one its contract names as "not now" (as given, or after the last `#`). */
function isRateLimitedCode(contract: ProviderContract, code: string | undefined): boolean {
  const codes = contract.providerError?.rateLimitedCodes;
  if (codes === undefined || code === undefined) return false;
  return codes.includes(code) || codes.includes(code.slice(code.lastIndexOf('#') + 1));
}

/** Closes an observation: the rendered problems, the foreign-origin mark, and its signal. */
export function finish(observation: Observation, problems: Problems, flags: InterpretFlags): Observation {
  const parseProblem = problems.render();
  if (parseProblem !== undefined) observation.parseProblem = parseProblem;
  if (flags.foreign) observation.errorCategory = 'foreign_origin';
  observation.signal = answerSignal(observation);
  return observation;
}

/**
 * An answer opened for reading: a 2xx with a JSON body, with the observation and problem list to fill; or, for an
 * error status or a body that is not JSON, the observation already finished.
 */
export type OpenedAnswer =
  | { kind: 'finished'; observation: Observation }
  | { kind: 'body'; observation: Observation; json: unknown; problems: Problems; flags: InterpretFlags };

/**
 * Opens `answer` to `action` for reading (see {@link OpenedAnswer}); `jobId` names the job the call was about,
 * `format` how the reading takes the body (V6).
 */
export function openAnswer(
  contract: ProviderContract,
  action: Action,
  answer: ProviderAnswer,
  jobId?: string,
  format?: AnswerFormat,
): OpenedAnswer {
  const success = isSuccessStatus(answer.status);
  const observation = success ? baseObservation(contract, action, answer) : errorAnswer(contract, action, answer);
  if (jobId !== undefined) observation.remoteJobId = cut(jobId, 500);
  if (!success) return { kind: 'finished', observation };
  const problems = new Problems();
  const flags: InterpretFlags = { foreign: false };
  const body = readBody(answer, format);
  if (body.ok) return { kind: 'body', observation, json: body.json, problems, flags };
  problems.add(body.problem);
  return { kind: 'finished', observation: finish(observation, problems, flags) };
}

/** Cuts a URL down to its last path segment and strips a prefix, as a value source says. */
export function applyExtract(
  value: string,
  extract: 'whole' | 'last_path_segment',
  stripPrefix: string | undefined,
  baseUrl: string,
): string | undefined {
  let out = value;
  if (extract === 'last_path_segment') {
    let pathname: string;
    try {
      pathname = new URL(value, baseUrl).pathname;
    } catch {
      return undefined;
    }
    const segment = pathname
      .split('/')
      .filter((s) => s !== '')
      .pop();
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

/** How a source is named in a problem. */
export function describeSource(source: { from: string; field?: string; name?: string }): string {
  if (source.from === 'body') return `body field ${source.field}`;
  if (source.from === 'header') return `header ${source.name}`;
  return source.from.replace(/_/g, ' ');
}

/** What reading a source found. */
export type SourceRead<S> =
  { kind: 'found'; value: string; source: S } | { kind: 'absent' } | { kind: 'mistyped'; problem: string };

/** The raw string of a header or body-field source, `undefined` when absent, or a problem when mistyped. */
export function rawSourceValue(
  source: { from: 'header'; name: string } | { from: 'body'; field: string },
  answer: ProviderAnswer,
  json: unknown,
): string | undefined | { problem: string } {
  let raw: unknown;
  if (source.from === 'header') raw = header(answer, source.name);
  else {
    const read = readField(json, source.field);
    raw = read.found ? read.value : undefined;
  }
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) return String(raw);
  if (typeof raw !== 'string') return { problem: `${describeSource(source)} is not a string` };
  return raw;
}

/** Reads the first present value source. A present but mistyped value is a problem, never skipped silently. */
export function readSources(
  sources: readonly ValueSource[],
  answer: ProviderAnswer,
  json: unknown,
  contract: ProviderContract,
): SourceRead<ValueSource> {
  for (const source of sources) {
    const raw = rawSourceValue(source, answer, json);
    if (raw === undefined) continue;
    if (typeof raw !== 'string') return { kind: 'mistyped', problem: raw.problem };
    const value = applyExtract(raw, source.extract, source.stripPrefix, contract.baseUrl);
    if (value === undefined) return { kind: 'mistyped', problem: `${describeSource(source)} holds no usable value` };
    return { kind: 'found', value, source };
  }
  return { kind: 'absent' };
}
