/**
 * Reading a job's state from one answer (P1, P7, V1) with a reading of the contract: the state field(s) and
 * their table, an AIP-151 derivation, statuses that mean "still running" whatever the body says, and the HTTP
 * status deciding when the answer states nothing. Pure.
 */
import { type RemoteStateCategory } from '../../../core/observation';
import { categorize, type ProviderStateTable } from '../../../core/provider-states';
import { type ProviderContract, type Reading } from '../contract';
import { readField } from '../field-path';
import { cut, isPlainJsonObject, type Problems } from './answer';

/** What was read: the provider's word (or a marker such as `http_204`) and its category. */
export interface StateRead {
  remoteState?: string;
  category?: RemoteStateCategory;
}

const EMPTY_TABLE: ProviderStateTable = {
  pending: [],
  success: [],
  failure: [],
  cancelled: [],
  expired: [],
  caseInsensitive: false,
};

/** The reading named `name` (`status.readings`), or the status section's own rules when `name` is absent. */
export function readingFor(contract: ProviderContract, name: string | undefined): Reading {
  if (name !== undefined) {
    const named = contract.status.readings?.[name];
    if (named !== undefined) return named;
  }
  const { format, stateField, derive, stateTable, pendingStatuses, whenNoState, result } = contract.status;
  return { format, stateField, derive, stateTable, pendingStatuses, whenNoState, result };
}

/** The HTTP status's category when the answer states no state (V1), if the reading maps it. */
export function categoryByStatus(reading: Reading, status: number): RemoteStateCategory | undefined {
  const map = reading.whenNoState;
  if (map === undefined) return undefined;
  for (const category of ['pending', 'success', 'failure'] as const) {
    if (map[category]?.includes(status) === true) return category;
  }
  return undefined;
}

type WordRead =
  { kind: 'word'; word: string } | { kind: 'absent'; field?: string } | { kind: 'mistyped'; problem: string };

function readWord(reading: Reading, json: unknown): WordRead {
  const fields = reading.stateField ?? [];
  for (const field of fields) {
    const read = readField(json, field);
    if (!read.found || read.value === null) continue;
    if (typeof read.value === 'string') return { kind: 'word', word: read.value };
    return { kind: 'mistyped', problem: `field ${field} is not a string` };
  }
  return { kind: 'absent', ...(fields.length > 0 ? { field: fields.join(' or ') } : {}) };
}

/**
 * Reads and classifies the state of one answer. Order: a `pendingStatuses` status is pending whatever the body
 * says (Azure's 202); a state word is looked up in the table (or derived, AIP-151); an answer stating no state
 * takes the category its HTTP status maps to in `whenNoState`; otherwise the missing state is a problem.
 * `json` is the parsed body (`undefined` for an empty one).
 */
export function readState(reading: Reading, status: number, json: unknown, problems: Problems): StateRead {
  const table = reading.stateTable ?? EMPTY_TABLE;
  const word = readWord(reading, json);
  const remoteState = word.kind === 'word' ? cut(word.word, 500) : undefined;
  if (reading.pendingStatuses?.includes(status) === true)
    return { remoteState: remoteState ?? `http_${status}`, category: 'pending' };
  if (word.kind === 'mistyped') {
    problems.add(word.problem);
    return {};
  }
  if (reading.derive !== undefined && isPlainJsonObject(json))
    return derive(reading, table, json, remoteState, problems);
  if (word.kind === 'word') return { remoteState, category: categorize(table, word.word) };
  const byStatus = categoryByStatus(reading, status);
  if (byStatus !== undefined) return { remoteState: `http_${status}`, category: byStatus };
  if (json === undefined) problems.add('the answer has no body and states no state');
  else if (!isPlainJsonObject(json)) problems.add('the body is not a JSON object');
  else if (word.field !== undefined) problems.add(`field ${word.field} is missing`);
  else problems.add('the answer states no state');
  return {};
}

/** AIP-151: `done` false is pending; `done` true with `error` is failure (or cancelled), with `response` success. */
function derive(
  reading: Reading,
  table: ProviderStateTable,
  json: Record<string, unknown>,
  remoteState: string | undefined,
  problems: Problems,
): StateRead {
  const rules = reading.derive!;
  const done = readField(json, rules.doneField);
  if (done.found && typeof done.value !== 'boolean') {
    problems.add(`field ${rules.doneField} is not a boolean`);
    return { remoteState };
  }
  // AIP-151: an absent `done` means false.
  const isDone = done.found && done.value === true;
  const error = readField(json, rules.errorField);
  const response = readField(json, rules.responseField);
  const hasError = error.found && error.value !== null;
  const hasResponse = response.found && response.value !== null;
  if (!isDone) {
    if (hasError || hasResponse) return { remoteState: remoteState ?? 'not_done', category: 'unknown' };
    if (remoteState === undefined) return { remoteState: 'not_done', category: 'pending' };
    const category = categorize(table, remoteState);
    // A final word while `done` is false is a contradiction (P7): unknown, escalated by the core.
    return { remoteState, category: category === 'pending' ? 'pending' : 'unknown' };
  }
  if (hasError && hasResponse) {
    problems.add(`both ${rules.errorField} and ${rules.responseField} are set on a done operation`);
    return { remoteState: remoteState ?? 'done', category: 'unknown' };
  }
  if (hasError) {
    if (!isPlainJsonObject(error.value)) problems.add(`field ${rules.errorField} is not an object`);
    const marker = rules.cancelledWhen === undefined ? undefined : readField(json, rules.cancelledWhen.field);
    const cancelled =
      marker !== undefined && marker.found && rules.cancelledWhen!.values.some((v) => v === marker.value);
    return {
      remoteState: remoteState ?? (cancelled ? 'done:cancelled' : 'done:error'),
      category: cancelled ? 'cancelled' : 'failure',
    };
  }
  if (hasResponse) return { remoteState: remoteState ?? 'done:response', category: 'success' };
  problems.add(`a done operation has neither ${rules.errorField} nor ${rules.responseField}`);
  return { remoteState: remoteState ?? 'done', category: 'unknown' };
}

/** Reads the state only when the document states one (a cancel answer may be `{}`). */
export function readStateIfStated(reading: Reading, status: number, json: unknown, problems: Problems): StateRead {
  const stated =
    (reading.stateField ?? []).some((field) => readField(json, field).found) ||
    (reading.derive !== undefined && readField(json, reading.derive.doneField).found);
  return stated ? readState(reading, status, json, problems) : {};
}
