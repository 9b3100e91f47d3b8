/**
 * The exact `asyncjob decide` command for each option an escalation offers (E2), and the signed one a decider runs
 * where the policy requires a signature (D3): what an operator copies from the Web UI's current details, a refusal
 * or the CLI. A provider's job ID or a person's name is quoted where a shell would read it. Pure; imported by the
 * workflow.
 */
import { type Decision, type OfferedOption, type OpenEscalation } from './escalation';

const UNITS: readonly [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
];

/** A duration in the largest unit that divides it whole (`15m`, `90m`, `36h`), as the CLI parses it. */
export function wholeDuration(ms: number): string {
  for (const [unit, size] of UNITS) if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** The CLI flags that choose `option` with the bounds it offers. */
function optionFlags(option: OfferedOption): string[] {
  const flags = [`--option ${option.option}`];
  if (option.extendMs !== undefined) flags.push(`--extend ${wholeDuration(option.extendMs)}`);
  if (option.extraStatusRequests !== undefined) flags.push(`--checks ${option.extraStatusRequests}`);
  if (option.extraTransportFailures !== undefined) flags.push(`--transport-failures ${option.extraTransportFailures}`);
  if (option.extraRateLimited !== undefined) flags.push(`--rate-limited ${option.extraRateLimited}`);
  if (option.jobIds !== undefined && option.jobIds.length > 0) flags.push(`--job-id ${shellWord(option.jobIds[0]!)}`);
  return flags;
}

/** One `asyncjob decide` command per offered option, with placeholders for who decides and why. */
export function decideCommands(operationId: string, escalation: OpenEscalation): string[] {
  return escalation.options.map(
    (option) => `asyncjob decide ${operationId} ${optionFlags(option).join(' ')} --by YOU --reason "WHY"`,
  );
}

/** Text double-quoted for a POSIX shell. */
function quoted(text: string): string {
  return `"${text.replace(/["\\$`]/g, '\\$&')}"`;
}

/** One shell word: as it is when it holds only characters no shell reads specially, else quoted. */
function shellWord(text: string): string {
  return /^[\p{L}\p{M}\p{N}@%+,./:=_-]+$/u.test(text) ? text : quoted(text);
}

/** The exact `asyncjob decide` command that sends this decision signed (with the decider's key file). */
export function signedDecideCommand(operationId: string, decision: Decision): string {
  const flags = [`--option ${decision.option}`];
  if (decision.extendMs !== undefined) flags.push(`--extend ${wholeDuration(decision.extendMs)}`);
  if (decision.extraStatusRequests !== undefined) flags.push(`--checks ${decision.extraStatusRequests}`);
  if (decision.extraTransportFailures !== undefined)
    flags.push(`--transport-failures ${decision.extraTransportFailures}`);
  if (decision.extraRateLimited !== undefined) flags.push(`--rate-limited ${decision.extraRateLimited}`);
  if (decision.jobId !== undefined) flags.push(`--job-id ${shellWord(decision.jobId)}`);
  // A bare name holds spaces and an e-mail address may hold an apostrophe: either would split or open a quote.
  const by = shellWord(decision.approvedBy);
  return `asyncjob decide ${operationId} ${flags.join(' ')} --by ${by} --reason ${quoted(decision.reason)} --sign`;
}
