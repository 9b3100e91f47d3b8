/**
 * The exact `asyncjob decide` command for each option an escalation offers (E2): what an operator copies from
 * the Web UI's current details or the CLI to answer it. Pure; imported by the workflow.
 */
import { type OfferedOption, type OpenEscalation } from './escalation';

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
  if (option.jobIds !== undefined && option.jobIds.length > 0) flags.push(`--job-id ${option.jobIds[0]}`);
  return flags;
}

/** One `asyncjob decide` command per offered option, with placeholders for who decides and why. */
export function decideCommands(operationId: string, escalation: OpenEscalation): string[] {
  return escalation.options.map(
    (option) => `asyncjob decide ${operationId} ${optionFlags(option).join(' ')} --by YOU --reason "WHY"`,
  );
}
