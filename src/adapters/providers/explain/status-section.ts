/** The Status section: the status request and how each reading turns an answer into a job state. Pure. */
import { type ProviderContract, type Reading } from '../contract';
import { type ExplainOptions, type ExplainSection } from './explanation';
import { answerFormatLines } from './format-lines';
import { code, fields, list, url } from './phrases';
import { requestDetailLines } from './request-lines';

/** How one reading decides a state: pending statuses, state field, AIP-151 derivation, state table, no-state answers. */
function readingLines(reading: Reading): string[] {
  const lines: string[] = [...answerFormatLines(reading.format, 'the answer')];
  if (reading.pendingStatuses !== undefined)
    lines.push(`HTTP ${list(reading.pendingStatuses)}: pending, whatever the body says`);
  if (reading.stateField !== undefined)
    lines.push(`the state is the word in ${fields(reading.stateField)} (the first present)`);
  if (reading.derive !== undefined) {
    const derive = reading.derive;
    const cancelled =
      derive.cancelledWhen === undefined
        ? ''
        : ` (cancelled when ${code(derive.cancelledWhen.field)} is ${list(derive.cancelledWhen.values)})`;
    lines.push(
      `AIP-151: while ${code(derive.doneField)} is not true the job is pending${reading.stateField !== undefined ? ' (unless the state word says otherwise: a contradiction is unknown)' : ''}; ` +
        `when it is true, ${code(derive.errorField)} means failure${cancelled} and ${code(derive.responseField)} means success`,
    );
  }
  const table = reading.stateTable;
  if (table !== undefined) {
    const parts = (['pending', 'success', 'failure', 'cancelled', 'expired'] as const)
      .filter((c) => table[c].length > 0)
      .map((c) => `${c}: ${list(table[c])}`);
    lines.push(`state table${table.caseInsensitive ? ' (case-insensitive)' : ' (exact match)'}: ${parts.join('; ')}`);
    lines.push('  any other word is unknown: the operation stops and escalates (P1)');
  }
  const noState = reading.whenNoState;
  if (noState !== undefined) {
    const parts = (['pending', 'success', 'failure'] as const)
      .filter((c) => noState[c] !== undefined)
      .map((c) => `HTTP ${list(noState[c]!)} means ${c}`);
    lines.push(`an answer that states no state: ${parts.join(', ')}`);
  }
  return lines;
}

/** The status request, poll URL following, every reading, what else is read, and when to poll again (P1, P3, P8). */
export function statusSection(contract: ProviderContract, options: ExplainOptions): ExplainSection {
  const status = contract.status;
  const lines: string[] = [];
  if (status.useStatusUrl && status.path !== undefined)
    lines.push(
      `${status.method} the poll URL from the create answer; without one, ${status.method} ${url(contract, options, status.path)}`,
    );
  else if (status.useStatusUrl) lines.push(`${status.method} the poll URL from the create answer`);
  else lines.push(`${status.method} ${url(contract, options, status.path ?? '')}`);
  lines.push(...requestDetailLines(status, 'application/json'));
  const follows = (contract.create.statusUrl ?? []).some((s) => s.from !== 'request_url');
  if (status.useStatusUrl && follows) {
    lines.push(
      status.followPollUrl
        ? 'a pending answer naming a new poll URL where the current one came from (same header or field) moves polling there, same origin only'
        : 'a new poll URL in a pending answer is ignored (followPollUrl: false)',
    );
  }
  lines.push(
    "the status section's own rules (the status path, poll URLs without a reading, and the state in cancel and reconciliation answers):",
  );
  lines.push(...readingLines(status).map((l) => `  ${l}`));
  for (const [name, reading] of Object.entries(status.readings ?? {})) {
    lines.push(`reading "${name}":`);
    lines.push(...readingLines(reading).map((l) => `  ${l}`));
  }
  const informative: string[] = [];
  if (status.progress !== undefined)
    informative.push(
      `progress in ${code(status.progress.field)} (${status.progress.scale}; shown to people, never used as completion, P8)`,
    );
  if (status.providerTimestampField !== undefined)
    informative.push(`the provider's timestamp in ${code(status.providerTimestampField)}`);
  if (status.expiresAtField !== undefined) informative.push(`the result's expiry in ${code(status.expiresAtField)}`);
  if (informative.length > 0) lines.push(`also read: ${informative.join('; ')}`);
  const hints = status.hints;
  const hintParts = [
    hints?.pollAfterSecondsField !== undefined ? `seconds to wait in ${code(hints.pollAfterSecondsField)}` : undefined,
    hints?.pollAfterMillisecondsField !== undefined
      ? `milliseconds to wait in ${code(hints.pollAfterMillisecondsField)}`
      : undefined,
    hints?.nextCheckAtField !== undefined ? `the next check time in ${code(hints.nextCheckAtField)}` : undefined,
  ].filter((p): p is string => p !== undefined);
  lines.push(
    `when to poll again: Retry-After is honoured as a minimum${hintParts.length > 0 ? `; poll hints: ${hintParts.join(', ')}` : ''} (validated by the planner, P3)`,
  );
  return { id: 'status', title: 'Status', lines };
}
