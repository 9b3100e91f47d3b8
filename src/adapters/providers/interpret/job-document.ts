/**
 * Fills an observation from one answer about the job (a status answer, or a create answer read with a reading):
 * its state, progress (P8), the provider's timestamp and expiry (P7), poll hints (P3), the error of a failed
 * job and the result reference of a successful one (R1, V2). Pure.
 */
import { type Observation } from '../../../core/observation';
import { type ProviderContract, type Reading } from '../contract';
import { readField } from '../field-path';
import { cut, isPlainJsonObject, readProviderError, type InterpretFlags, type Problems } from './answer';
import { readResultReference, type ResultContext } from './result-facts';
import { readState, type StateRead } from './state';

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

/** A hint given in milliseconds, as seconds for the planner; anything not numeric is passed on to be rejected (P3). */
function millisecondsAsSeconds(value: unknown): unknown {
  if (typeof value === 'number') return value / 1000;
  if (typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value) / 1000;
  return value;
}

function readProgress(contract: ProviderContract, json: unknown, observation: Observation, problems: Problems): void {
  const rules = contract.status.progress;
  if (rules === undefined) return;
  const read = readField(json, rules.field);
  if (!read.found || read.value === null) return;
  const raw = read.value;
  const value =
    typeof raw === 'number' && Number.isFinite(raw) ? (rules.scale === 'percent' ? raw / 100 : raw) : undefined;
  if (value === undefined || value < 0 || value > 1)
    problems.add(`field ${rules.field} is not a ${rules.scale === 'percent' ? 'number in 0..100' : 'number in 0..1'}`);
  else observation.progress = value;
}

function readHints(contract: ProviderContract, json: unknown, observation: Observation): void {
  const hints = contract.status.hints;
  const seconds = readHint(json, hints?.pollAfterSecondsField);
  const milliseconds = readHint(json, hints?.pollAfterMillisecondsField);
  const pollAfterSeconds = seconds ?? (milliseconds === undefined ? undefined : millisecondsAsSeconds(milliseconds));
  const nextCheckAt = readHint(json, hints?.nextCheckAtField);
  if (pollAfterSeconds === undefined && nextCheckAt === undefined) return;
  observation.hints = {};
  if (pollAfterSeconds !== undefined) observation.hints.pollAfterSeconds = pollAfterSeconds;
  if (nextCheckAt !== undefined) observation.hints.nextCheckAt = nextCheckAt;
}

/** Reads one answer about the job into `observation` with `reading`; returns the state read. */
export function readJobDocument(
  contract: ProviderContract,
  observation: Observation,
  answer: { status: number; json: unknown },
  reading: Reading,
  context: ResultContext,
  problems: Problems,
  flags: InterpretFlags,
): StateRead {
  const { json } = answer;
  const state = readState(reading, answer.status, json, problems);
  if (state.remoteState !== undefined) observation.remoteState = state.remoteState;
  if (state.category !== undefined) observation.category = state.category;
  if (isPlainJsonObject(json)) {
    readProgress(contract, json, observation, problems);
    const timestamp = readTimestampField(json, contract.status.providerTimestampField, problems);
    if (timestamp !== undefined) observation.providerTimestamp = timestamp;
    const expiresAt = readTimestampField(json, contract.status.expiresAtField, problems);
    if (expiresAt !== undefined) observation.expiresAt = expiresAt;
    readHints(contract, json, observation);
  }
  if (
    state.category === 'failure' ||
    state.category === 'cancelled' ||
    state.category === 'expired' ||
    state.category === 'unknown'
  ) {
    const providerError = readProviderError(contract, json);
    if (providerError !== undefined) observation.providerError = providerError;
  }
  if (state.category === 'success') {
    const reference = readResultReference(
      contract,
      reading.result ?? contract.result.url,
      json,
      context,
      problems,
      flags,
    );
    if (reference !== undefined) observation.resultReference = reference;
  }
  return state;
}
