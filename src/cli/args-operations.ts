/**
 * Parsing the commands that drive operations (`start`, `status`, `watch`, `cancel`, `decide`, `list`) into typed commands, or a
 * {@link UsageError} naming the option. Pure: a `--payload @file` is returned as a file reference.
 */
import { parseActor } from '../core/actor';
import { escalationReasonSchema, localStateSchema } from '../core/journal';
import {
  countOption,
  type CommonFlags,
  type DeadlineArg,
  deadlineOption,
  durationOption,
  flags,
  type JsonSource,
  jsonSource,
  keyValueOption,
  onePositional,
  noPositionals,
  optional,
  parse,
  required,
  UsageError,
} from './args-common';

/** `asyncjob start`. */
export type StartCommand = {
  command: 'start';
  provider: string;
  operationId: string;
  payload: JsonSource;
  startedBy: string;
  authorisedBy: string;
  createDeadline: DeadlineArg;
  resultDeadline: DeadlineArg;
  clientReference?: string;
  policy?: JsonSource;
  /** `--var NAME=VALUE`, repeatable: the operation variables the adapter's templates expand (C5). */
  variables?: Record<string, string>;
  wait: boolean;
  /** With `wait`: wait through escalations until a final state. */
  untilFinal: boolean;
  /** Start even when no worker serves the provider now. */
  allowUnservedProvider: boolean;
} & CommonFlags;

/** `asyncjob status`. */
export type StatusCommand = { command: 'status'; operationId: string } & CommonFlags;

/** `asyncjob result`: the verified result's bytes, on stdout or into `out`. */
export type ResultCommand = { command: 'result'; operationId: string; out?: string } & CommonFlags;

/** `asyncjob cancel`. */
export type CancelCommand = {
  command: 'cancel';
  operationId: string;
  by: string;
  reason: string;
  expectedEffect?: string;
} & CommonFlags;

/** `asyncjob watch`. */
export type WatchCommand = {
  command: 'watch';
  operationId: string;
  intervalMs: number;
  untilFinal: boolean;
} & CommonFlags;

/** The decision given to `decide` with `--option`. */
export interface DecideAnswer {
  option: string;
  by: string;
  reason: string;
  extendMs?: number;
  checks?: number;
  transportFailures?: number;
  rateLimited?: number;
  jobId?: string;
}

/** The key a decision is signed with (D3): the decider's own in the keys directory (`--sign`), or a file (`--key`). */
export type SigningKey = { kind: 'decider' } | { kind: 'file'; path: string };

/** `asyncjob decide`. */
export type DecideCommand = {
  command: 'decide';
  operationId: string;
  answer?: DecideAnswer;
  /** With `answer`: sign it with this key. */
  signWith?: SigningKey;
} & CommonFlags;

/** `asyncjob list`: every filter given must match. */
export type ListCommand = {
  command: 'list';
  escalated: boolean;
  state?: string;
  provider?: string;
  reason?: string;
  limit: number;
} & CommonFlags;

/** A command's `--help`. */
type Help = { command: 'help'; topic: string };

const START_REQUIRED = [
  'provider',
  'operation-id',
  'payload',
  'started-by',
  'authorised-by',
  'create-deadline',
  'result-deadline',
];

/** Parses `start`. */
export function parseStart(rest: string[]): StartCommand | Help {
  const command = 'start';
  const { values, positionals } = parse(command, rest, {
    provider: { type: 'string' },
    'operation-id': { type: 'string' },
    payload: { type: 'string' },
    'started-by': { type: 'string' },
    'authorised-by': { type: 'string' },
    'create-deadline': { type: 'string' },
    'result-deadline': { type: 'string' },
    'client-reference': { type: 'string' },
    policy: { type: 'string' },
    var: { type: 'string', multiple: true },
    wait: { type: 'boolean' },
    'until-final': { type: 'boolean' },
    'allow-unserved-provider': { type: 'boolean' },
  });
  if (values.help) return { command: 'help', topic: command };
  noPositionals(command, positionals);
  const v = values as Record<string, unknown>;
  const missing = START_REQUIRED.filter((name) => typeof v[name] !== 'string');
  if (missing.length > 0) throw new UsageError(`missing ${missing.map((m) => `--${m}`).join(', ')}`, command);
  if (values['until-final'] === true && values.wait !== true)
    throw new UsageError('--until-final goes with --wait', command);
  const policy = optional(v, 'policy');
  const clientReference = optional(v, 'client-reference');
  const variables = keyValueOption(command, 'var', v.var);
  return {
    command,
    provider: required(command, v, 'provider'),
    operationId: required(command, v, 'operation-id'),
    payload: jsonSource(required(command, v, 'payload')),
    startedBy: required(command, v, 'started-by'),
    authorisedBy: required(command, v, 'authorised-by'),
    createDeadline: deadlineOption(command, 'create-deadline', required(command, v, 'create-deadline')),
    resultDeadline: deadlineOption(command, 'result-deadline', required(command, v, 'result-deadline')),
    ...(clientReference !== undefined ? { clientReference } : {}),
    ...(policy !== undefined ? { policy: jsonSource(policy) } : {}),
    ...(variables !== undefined ? { variables } : {}),
    wait: values.wait === true,
    untilFinal: values['until-final'] === true,
    allowUnservedProvider: values['allow-unserved-provider'] === true,
    ...flags(values),
  };
}

/** Parses `status`. */
export function parseStatus(rest: string[]): StatusCommand | Help {
  const command = 'status';
  const { values, positionals } = parse(command, rest, {});
  if (values.help) return { command: 'help', topic: command };
  return { command, operationId: onePositional(command, positionals), ...flags(values) };
}

/** Parses `result ID [--out FILE]`. */
export function parseResult(rest: string[]): ResultCommand | Help {
  const command = 'result';
  const { values, positionals } = parse(command, rest, { out: { type: 'string' } });
  if (values.help) return { command: 'help', topic: command };
  const out = optional(values, 'out');
  if (out !== undefined && out.trim().length === 0) throw new UsageError('--out needs a file', command);
  return {
    command,
    operationId: onePositional(command, positionals),
    ...(out !== undefined ? { out } : {}),
    ...flags(values),
  };
}

/** Parses `cancel`: who asks and why are required (X1). */
export function parseCancel(rest: string[]): CancelCommand | Help {
  const command = 'cancel';
  const { values, positionals } = parse(command, rest, {
    by: { type: 'string' },
    reason: { type: 'string' },
    'expected-effect': { type: 'string' },
  });
  if (values.help) return { command: 'help', topic: command };
  const operationId = onePositional(command, positionals);
  const expectedEffect = optional(values, 'expected-effect');
  return {
    command,
    operationId,
    by: required(command, values, 'by'),
    reason: required(command, values, 'reason'),
    ...(expectedEffect !== undefined ? { expectedEffect } : {}),
    ...flags(values),
  };
}

/** Parses `watch`. */
export function parseWatch(rest: string[]): WatchCommand | Help {
  const command = 'watch';
  const { values, positionals } = parse(command, rest, {
    interval: { type: 'string' },
    'until-final': { type: 'boolean' },
  });
  if (values.help) return { command: 'help', topic: command };
  const interval = optional(values, 'interval');
  return {
    command,
    operationId: onePositional(command, positionals),
    intervalMs: interval !== undefined ? durationOption(command, 'interval', interval) : 1000,
    untilFinal: values['until-final'] === true,
    ...flags(values),
  };
}

const DECIDE_FLAGS = [
  'by',
  'reason',
  'extend',
  'checks',
  'transport-failures',
  'rate-limited',
  'job-id',
  'sign',
  'key',
];

/** `--sign` (the decider's own key) or `--key FILE`; a decision signed is by a valid identity (D1). */
function signingKey(command: string, values: Record<string, unknown>, by: string): SigningKey | undefined {
  const file = optional(values, 'key');
  if (file !== undefined && file.trim().length === 0) throw new UsageError('--key needs a key file', command);
  if (file === undefined && values.sign !== true) return undefined;
  const decider = parseActor(by);
  if (decider.kind === 'invalid') throw new UsageError(`--by: not an identity: ${decider.message}`, command);
  return file !== undefined ? { kind: 'file', path: file } : { kind: 'decider' };
}

/** Parses `decide`: without `--option` it shows the escalation, with it it answers. */
export function parseDecide(rest: string[]): DecideCommand | Help {
  const command = 'decide';
  const { values, positionals } = parse(command, rest, {
    option: { type: 'string' },
    by: { type: 'string' },
    reason: { type: 'string' },
    extend: { type: 'string' },
    checks: { type: 'string' },
    'transport-failures': { type: 'string' },
    'rate-limited': { type: 'string' },
    'job-id': { type: 'string' },
    sign: { type: 'boolean' },
    key: { type: 'string' },
  });
  if (values.help) return { command: 'help', topic: command };
  const operationId = onePositional(command, positionals);
  const option = optional(values, 'option');
  if (option === undefined) {
    const given = DECIDE_FLAGS.filter((n) => (values as Record<string, unknown>)[n] !== undefined);
    if (given.length > 0)
      throw new UsageError(
        `--${given[0]} needs --option (run "asyncjob decide ${operationId}" to see the options offered)`,
        command,
      );
    return { command, operationId, ...flags(values) };
  }
  const answer: DecideAnswer = {
    option,
    by: required(command, values, 'by'),
    reason: required(command, values, 'reason'),
  };
  const extend = optional(values, 'extend');
  if (extend !== undefined) answer.extendMs = durationOption(command, 'extend', extend);
  const checks = countOption(command, 'checks', optional(values, 'checks'));
  if (checks !== undefined) answer.checks = checks;
  const transportFailures = countOption(command, 'transport-failures', optional(values, 'transport-failures'));
  if (transportFailures !== undefined) answer.transportFailures = transportFailures;
  const rateLimited = countOption(command, 'rate-limited', optional(values, 'rate-limited'));
  if (rateLimited !== undefined) answer.rateLimited = rateLimited;
  const jobId = optional(values, 'job-id');
  if (jobId !== undefined) answer.jobId = jobId;
  const signWith = signingKey(command, values, answer.by);
  return { command, operationId, answer, ...(signWith !== undefined ? { signWith } : {}), ...flags(values) };
}

function oneOf(
  command: string,
  name: string,
  value: string | undefined,
  allowed: readonly string[],
  what: string,
): string | undefined {
  if (value !== undefined && !allowed.includes(value))
    throw new UsageError(`--${name}: "${value}" is not ${what} (${allowed.join(', ')})`, command);
  return value;
}

/** Parses `list`: `--escalated` is `--state escalated`; `--reason` lists escalated operations with that reason. */
export function parseList(rest: string[]): ListCommand | Help {
  const command = 'list';
  const { values, positionals } = parse(command, rest, {
    escalated: { type: 'boolean' },
    state: { type: 'string' },
    provider: { type: 'string' },
    reason: { type: 'string' },
    limit: { type: 'string' },
  });
  if (values.help) return { command: 'help', topic: command };
  noPositionals(command, positionals);
  const escalated = values.escalated === true;
  const state = oneOf(command, 'state', optional(values, 'state'), localStateSchema.options, 'a local state');
  if (escalated && state !== undefined && state !== 'escalated')
    throw new UsageError(`--escalated contradicts --state ${state}`, command);
  const reason = oneOf(
    command,
    'reason',
    optional(values, 'reason'),
    escalationReasonSchema.options,
    'an escalation reason',
  );
  const provider = optional(values, 'provider');
  const limit = countOption(command, 'limit', optional(values, 'limit')) ?? 100;
  if (limit < 1) throw new UsageError('--limit: must be at least 1', command);
  const effectiveState = escalated ? 'escalated' : state;
  return {
    command,
    escalated,
    ...(effectiveState !== undefined ? { state: effectiveState } : {}),
    ...(provider !== undefined ? { provider } : {}),
    ...(reason !== undefined ? { reason } : {}),
    limit,
    ...flags(values),
  };
}
