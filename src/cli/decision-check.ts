/**
 * The client-side checks of `asyncjob decide --option ...`: the answer must name an option the open escalation
 * offers, within its bounds, with exactly the flags that option takes. Checked here for a clear message; the
 * workflow's update validator checks again (A2).
 */
import { AsyncJobRequestRefused } from '../client/errors';
import type { EscalationView } from '../client';
import type { Decision, OfferedOption } from '../core/escalation';
import { type DecideAnswer, UsageError } from './args';
import { formatDuration } from './duration';

/**
 * The decision `answer` names, checked against `escalation`'s offered options (A2). Throws
 * {@link AsyncJobRequestRefused} when there is no open escalation, the option is not offered or its bounds are
 * exceeded, and {@link UsageError} when the flags do not fit the option. Pure.
 */
export function offeredDecision(
  operationId: string,
  escalation: EscalationView | null,
  answer: DecideAnswer,
): Decision {
  if (!escalation)
    throw new AsyncJobRequestRefused(
      operationId,
      'ASYNCJOB_ERR_NO_OPEN_ESCALATION',
      `operation ${operationId} has no open escalation to decide`,
    );
  const offered = escalation.options.find((o) => o.option === answer.option);
  if (!offered) {
    throw new AsyncJobRequestRefused(
      operationId,
      'ASYNCJOB_ERR_OPTION_NOT_OFFERED',
      `"${answer.option}" was not offered for ${escalation.reason}; offered: ${escalation.options.map((o) => o.option).join(', ')}`,
    );
  }
  if (answer.option === 'extend') checkExtension(operationId, offered, answer);
  else refuseExtensionBounds(answer);
  checkJobId(offered, answer);
  return {
    option: answer.option,
    approvedBy: answer.by,
    reason: answer.reason,
    ...(answer.extendMs !== undefined ? { extendMs: answer.extendMs } : {}),
    ...(answer.checks !== undefined ? { extraStatusRequests: answer.checks } : {}),
    ...(answer.transportFailures !== undefined ? { extraTransportFailures: answer.transportFailures } : {}),
    ...(answer.rateLimited !== undefined ? { extraRateLimited: answer.rateLimited } : {}),
    ...(answer.jobId !== undefined ? { jobId: answer.jobId } : {}),
  } as Decision; // the option was found among the offered ones, so it is a decision option
}

/** `extend` names its bounds, each within what was offered; every bound exceeded is named at once. */
function checkExtension(operationId: string, offered: OfferedOption, answer: DecideAnswer): void {
  if (answer.extendMs === undefined || answer.checks === undefined) {
    throw new UsageError(
      `--option extend names its bounds: --extend D --checks N (offered: at most ${formatDuration(offered.extendMs ?? 0)} and ${offered.extraStatusRequests ?? 0} checks)`,
      'decide',
    );
  }
  const over: string[] = [];
  if (answer.extendMs > (offered.extendMs ?? 0))
    over.push(
      `--extend ${formatDuration(answer.extendMs)} exceeds the offered ${formatDuration(offered.extendMs ?? 0)}`,
    );
  if (answer.checks > (offered.extraStatusRequests ?? 0))
    over.push(`--checks ${answer.checks} exceeds the offered ${offered.extraStatusRequests ?? 0}`);
  if ((answer.transportFailures ?? 0) > (offered.extraTransportFailures ?? 0))
    over.push(
      `--transport-failures ${answer.transportFailures} exceeds the offered ${offered.extraTransportFailures ?? 0}`,
    );
  if ((answer.rateLimited ?? 0) > (offered.extraRateLimited ?? 0))
    over.push(`--rate-limited ${answer.rateLimited} exceeds the offered ${offered.extraRateLimited ?? 0}`);
  if (over.length > 0)
    throw new AsyncJobRequestRefused(operationId, 'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS', over.join('; '));
}

/** Only `extend` takes extension bounds. */
function refuseExtensionBounds(answer: DecideAnswer): void {
  const extension = [
    answer.extendMs !== undefined && '--extend',
    answer.checks !== undefined && '--checks',
    answer.transportFailures !== undefined && '--transport-failures',
    answer.rateLimited !== undefined && '--rate-limited',
  ].filter(Boolean);
  if (extension.length > 0)
    throw new UsageError(`${extension.join(', ')}: only --option extend takes extension bounds`, 'decide');
}

/** `adopt_job` names one of the offered jobs; no other option names a job. */
function checkJobId(offered: OfferedOption, answer: DecideAnswer): void {
  if (answer.option === 'adopt_job' && (answer.jobId === undefined || !(offered.jobIds ?? []).includes(answer.jobId))) {
    throw new UsageError(`--option adopt_job needs --job-id, one of: ${(offered.jobIds ?? []).join(', ')}`, 'decide');
  }
  if (answer.option !== 'adopt_job' && answer.jobId !== undefined)
    throw new UsageError('--job-id: only --option adopt_job names a job', 'decide');
}
