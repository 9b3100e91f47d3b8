/**
 * What the CLI shows of an operation: the stable JSON view (documented in docs/cli.md) and its text renderings,
 * including the `watch` line with its progress bar. Pure: the time is an argument.
 */
import { isErrorCode } from '../core/codes';
import type { OfferedOption } from '../core/escalation';
import type { OperationRecord, ResultSummary } from '../core/operation';
import { issueText } from '../core/issues';
import { FINAL_STATES } from '../core/transitions';
import { formatDuration } from './duration';

/** The stable view of an operation record in `--json` output (`operation` in `asyncjob.status/v1`). */
export interface OperationView {
  operationId: string;
  provider: string;
  /** Our state (M2). */
  localState: string;
  /** True in a final state (succeeded, failed, cancelled, closed). */
  final: boolean;
  jobId: string | null;
  /** The provider's facts as last reported (M2); progress is for people only (P8). */
  remote: { state: string | null; category: string | null; progress: number | null; observedAt: string | null };
  /** When the next status read is planned and why (P4). */
  nextPollAt: string | null;
  delaySource: string | null;
  statusRequests: { used: number; allowed: number };
  deadlines: { createAt: string; resultAt: string; cancelAt: string | null };
  escalation: { reason: string; options: OfferedOption[]; decisionDeadlineAt: string } | null;
  cancel: { requestedBy: string; reason: string; requestedAt: string; sentAt: string | null } | null;
  result: ResultSummary | null;
  /** The provider's last error (a failed job, a refused request): why a `failed` operation failed. */
  providerError: { code: string | null; message: string | null } | null;
  /** The operation variables as recorded (defaults applied once the adapter's declarations were read), C5. */
  variables: Record<string, string>;
  /** Why the operation was refused before anything was sent (C5): its code and every issue; null otherwise. */
  refusal: { code: string; issues: { path: string; message: string }[] } | null;
  traceId: string;
}

const iso = (ms: number | undefined | null): string | null =>
  ms === undefined || ms === null ? null : new Date(ms).toISOString();

/** Builds the stable view of a record. */
export function operationView(record: OperationRecord): OperationView {
  return {
    operationId: record.operationId,
    provider: record.provider,
    localState: record.localState,
    final: FINAL_STATES.includes(record.localState),
    jobId: record.jobId ?? null,
    remote: {
      state: record.remote.state ?? null,
      category: record.remote.category ?? null,
      progress: record.remote.progress ?? null,
      observedAt: iso(record.remote.observedAtMs),
    },
    nextPollAt: iso(record.schedule.nextPollAtMs),
    delaySource: record.schedule.delaySource ?? null,
    statusRequests: { used: record.used.statusRequests, allowed: record.budgets.maxStatusRequests },
    deadlines: {
      createAt: iso(record.deadlines.createDeadlineMs)!,
      resultAt: iso(record.deadlines.resultDeadlineMs)!,
      cancelAt: iso(record.deadlines.cancelDeadlineMs),
    },
    escalation: record.escalation
      ? {
          reason: record.escalation.reason,
          options: record.escalation.options,
          decisionDeadlineAt: iso(record.escalation.decisionDeadlineMs)!,
        }
      : null,
    cancel: record.cancel
      ? {
          requestedBy: record.cancel.requestedBy,
          reason: record.cancel.reason,
          requestedAt: iso(record.cancel.requestedAtMs)!,
          sentAt: iso(record.cancel.sentAtMs),
        }
      : null,
    result: record.result,
    providerError: record.remote.lastError
      ? { code: record.remote.lastError.code ?? null, message: record.remote.lastError.message ?? null }
      : null,
    variables: { ...(record.variables ?? {}) },
    refusal: record.refusal
      ? { code: record.refusal.code, issues: record.refusal.issues.map((i) => ({ ...i })) }
      : null,
    traceId: record.traceId,
  };
}

/** The provider's error in one line, `code: message` (either alone when the other is unknown), or null. */
export function providerErrorText(view: Pick<OperationView, 'providerError'>): string | null {
  const parts = [view.providerError?.code, view.providerError?.message].filter((p) => p !== null && p !== undefined);
  return parts.length > 0 ? parts.join(': ') : null;
}

/** A fixed-width progress bar: `[########------------]  40%`, or `[....................]   ?%` when unknown. */
function progressBar(progress: number | null, width = 20): string {
  if (progress === null) return `[${'.'.repeat(width)}]   ?%`;
  const clamped = Math.min(1, Math.max(0, progress));
  const filled = Math.round(clamped * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.round(clamped * 100)).padStart(3)}%`;
}

function clock(isoText: string): string {
  return `${isoText.slice(11, 19)} UTC`;
}

function nextPollText(view: OperationView, nowMs: number): string | null {
  if (view.nextPollAt === null || view.final || view.localState === 'escalated') return null;
  const inMs = Date.parse(view.nextPollAt) - nowMs;
  const when = inMs > 0 ? `in ${formatDuration(inMs)}` : 'due';
  return `next poll ${clock(view.nextPollAt)} (${when}${view.delaySource ? `, ${view.delaySource}` : ''})`;
}

/**
 * The one-line `watch` rendering. `withCountdown` adds the time left to the next poll (TTY redraws); without it
 * the line changes only when the operation does (one line per change in logs).
 */
export function watchLine(view: OperationView, nowMs: number, withCountdown: boolean): string {
  const remote = view.remote.state ?? '-';
  const parts = [
    progressBar(view.remote.progress),
    `local ${view.localState}`,
    `remote ${remote}`,
    `checks ${view.statusRequests.used}/${view.statusRequests.allowed}`,
  ];
  if (view.escalation) parts.push(`escalated: ${view.escalation.reason}`);
  const error = view.localState === 'failed' ? providerErrorText(view) : null;
  if (error) parts.push(`provider error ${error}`);
  if (view.refusal) parts.push(`refused ${view.refusal.code}`);
  if (withCountdown) {
    const next = nextPollText(view, nowMs);
    if (next) parts.push(next);
  } else if (view.nextPollAt && !view.final && view.localState !== 'escalated') {
    parts.push(`next poll ${clock(view.nextPollAt)}${view.delaySource ? ` (${view.delaySource})` : ''}`);
  }
  return parts.join('  ');
}

/** The multi-line text of `asyncjob status`. */
export function statusText(view: OperationView, nowMs: number): string {
  const lines = [
    `operation ${view.operationId} (provider ${view.provider}${view.jobId ? `, job ${view.jobId}` : ''})`,
    `  state:     ${view.localState}${view.final ? ' (final)' : ''}; remote ${view.remote.state ?? 'unknown'}${view.remote.category ? ` (${view.remote.category})` : ''}`,
    `  progress:  ${progressBar(view.remote.progress)}`,
    `  checks:    ${view.statusRequests.used} of ${view.statusRequests.allowed} status requests`,
    `  deadline:  result by ${view.deadlines.resultAt}${view.deadlines.cancelAt ? `, cancel confirmed by ${view.deadlines.cancelAt}` : ''}`,
  ];
  const next = nextPollText(view, nowMs);
  if (next) lines.push(`  schedule:  ${next}`);
  if (view.cancel)
    lines.push(
      `  cancel:    requested by ${view.cancel.requestedBy} at ${view.cancel.requestedAt} (${view.cancel.reason})${view.cancel.sentAt ? `, sent ${view.cancel.sentAt}` : ', not sent yet'}`,
    );
  if (view.escalation) {
    lines.push(`  escalated: ${view.escalation.reason}; decide before ${view.escalation.decisionDeadlineAt}`);
    lines.push(
      `  options:   ${view.escalation.options.map((o) => o.option).join(', ')} (asyncjob decide ${view.operationId})`,
    );
  }
  const error = providerErrorText(view);
  if (error) lines.push(`  error:     ${error} (the provider's last error)`);
  if (view.refusal)
    lines.push(`  refused:   ${view.refusal.code}: ${issueText(view.refusal.issues, '(request)')} (nothing was sent)`);
  const variables = Object.entries(view.variables);
  if (variables.length > 0)
    lines.push(`  variables: ${variables.map(([name, value]) => `${name}=${JSON.stringify(value)}`).join(', ')}`);
  if (view.result)
    lines.push(
      `  result:    ${view.result.validation}${view.result.artifactLocation ? ` at ${view.result.artifactLocation}` : ''}${view.result.sha256 ? ` sha256 ${view.result.sha256}` : ''}`,
    );
  lines.push(`  trace:     ${view.traceId}`);
  return `${lines.join('\n')}\n`;
}

/** The text of an offered option with its bounds and the flags that choose it. */
export function optionText(option: OfferedOption): string {
  const flags = [`--option ${option.option}`];
  if (option.extendMs !== undefined) flags.push(`--extend ${formatDuration(option.extendMs)}`);
  if (option.extraStatusRequests !== undefined) flags.push(`--checks ${option.extraStatusRequests}`);
  if (option.extraTransportFailures !== undefined) flags.push(`--transport-failures ${option.extraTransportFailures}`);
  if (option.extraRateLimited !== undefined) flags.push(`--rate-limited ${option.extraRateLimited}`);
  if (option.jobIds !== undefined && option.jobIds.length > 0) flags.push(`--job-id ${option.jobIds[0]}`);
  return `  ${option.option.padEnd(26)} ${option.label}\n  ${' '.repeat(26)} ${flags.join(' ')} --by WHO --reason TEXT`;
}

/**
 * A workflow's failure in one line: `TYPE: message`. The message of a failure of ours (its type one of our codes)
 * already leads with its code (`core/errors.ts` `failureFields`); a termination has no type.
 */
export function failureText(failure: { type: string | null; message: string }): string {
  return failure.type && !isErrorCode(failure.type) ? `${failure.type}: ${failure.message}` : failure.message;
}

/**
 * What to do about an escalation, ending with the exact command: the options offered with the flags that choose
 * each (when known), then `operation ID escalated (REASON): asyncjob decide ID`.
 */
export function decideAdvice(operationId: string, reason: string, options: readonly OfferedOption[] | null): string[] {
  const offered =
    options && options.length > 0
      ? ['options offered (asyncjob decide ' + operationId + ' --option O ...):', ...options.map(optionText)]
      : [];
  return [...offered, `operation ${operationId} escalated (${reason}): asyncjob decide ${operationId}`];
}
