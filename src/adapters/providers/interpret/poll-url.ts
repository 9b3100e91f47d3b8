/**
 * The poll URL (C4, V1): read from the create answer in the contract's priority order (`Operation-Location`,
 * `Azure-AsyncOperation`, `Location`, a body field, the request URL), and followed when a pending answer names a
 * new one where the current one came from. Always on the provider's origin, used whole or refused. Pure.
 */
import { type ProviderContract, type PollUrlSource } from '../contract';
import { resolveOnOrigin } from '../urls';
import {
  MAX_URL_CHARS,
  describeSource,
  rawSourceValue,
  type InterpretFlags,
  type ProviderAnswer,
  type Problems,
} from './answer';

/** An answer being read for a poll URL: where problems and the foreign-origin mark are collected. */
export interface PollUrlRead {
  contract: ProviderContract;
  answer: ProviderAnswer;
  json: unknown;
  problems: Problems;
  flags: InterpretFlags;
}

/** A poll URL found, with the reading its answers are read with. */
export interface PollUrl {
  url: string;
  reading?: string;
}

/** What reading a poll URL found: the URL, nothing, or a problem with the first source present (named). */
export type FoundPollUrl =
  | { kind: 'found'; pollUrl: PollUrl; source: PollUrlSource }
  | { kind: 'absent' }
  | { kind: 'problem'; source: PollUrlSource };

function resolve(
  contract: ProviderContract,
  raw: string,
  what: string,
  problems: Problems,
  flags: InterpretFlags,
): string | undefined {
  const resolved = resolveOnOrigin(contract.baseUrl, raw, what);
  if (!resolved.ok) {
    problems.add(resolved.problem);
    if (resolved.errorCategory === 'foreign_origin') flags.foreign = true;
    return undefined;
  }
  if (resolved.url.length > MAX_URL_CHARS) {
    problems.add(
      `${what} is ${resolved.url.length} characters, more than ${MAX_URL_CHARS}: refused whole, never shortened`,
    );
    return undefined;
  }
  return resolved.url;
}

function readOne(
  { contract, answer, json, problems, flags }: PollUrlRead,
  sources: readonly PollUrlSource[],
  requestUrl: string | undefined,
): FoundPollUrl {
  for (const source of sources) {
    const raw = source.from === 'request_url' ? requestUrl : rawSourceValue(source, answer, json);
    if (raw === undefined) continue;
    if (typeof raw !== 'string') {
      problems.add(raw.problem);
      return { kind: 'problem', source };
    }
    const url = resolve(contract, raw, `the poll URL in ${describeSource(source)}`, problems, flags);
    if (url === undefined) return { kind: 'problem', source };
    return {
      kind: 'found',
      pollUrl: { url, ...(source.reading !== undefined ? { reading: source.reading } : {}) },
      source,
    };
  }
  return { kind: 'absent' };
}

/** The poll URL of a create answer, first source found (V1). */
export function readPollUrl(read: PollUrlRead, requestUrl: string | undefined): FoundPollUrl {
  return readOne(read, read.contract.create.statusUrl ?? [], requestUrl);
}

/**
 * V5: whether a poll URL source names a status monitor, a document of its own whose answers say when the job is
 * done: its answers are read with another reading than the create answer itself (`reading: monitor` beside
 * `readState: resource`). The create answer's HTTP status alone then never ends the job; only a terminal state
 * word in its body does.
 */
export function namesMonitor(contract: ProviderContract, source: PollUrlSource): boolean {
  const createReading = typeof contract.create.readState === 'string' ? contract.create.readState : undefined;
  return source.reading !== createReading;
}

/**
 * A new poll URL named by a pending status answer (V1): read from the header and body sources that share the
 * current reading (a Location answered at a Location, an operation URL at an operation URL); `undefined` when the
 * answer names none, the same one, or the contract does not follow.
 */
export function followedPollUrl(read: PollUrlRead, current: PollUrl | undefined): string | undefined {
  const { contract } = read;
  if (!contract.status.followPollUrl || current === undefined) return undefined;
  const sources = (contract.create.statusUrl ?? []).filter(
    (s) => s.from !== 'request_url' && s.reading === current.reading,
  );
  const found = readOne(read, sources, undefined);
  return found.kind === 'found' && found.pollUrl.url !== current.url ? found.pollUrl.url : undefined;
}
