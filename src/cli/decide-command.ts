/**
 * `asyncjob cancel` and `asyncjob decide`: the workflow's `cancelOperation` and `decideOperation` updates, the
 * options offered shown first, and the client-side checks of a decision for a clear message (the workflow checks
 * again, A2). An ended operation answers `ASYNCJOB_ERR_OPERATION_FINAL` with its state and why it ended.
 */
import { AsyncJobRequestRefused, OperationEndedError } from '../client/errors';
import type { Decision } from '../core/escalation';
import { UsageError } from './args';
import { type Cmd, type CommandContext, emit } from './command-context';
import { formatDuration } from './duration';
import { EXIT, type ExitCode } from './exit-codes';
import { optionText } from './view';

/** `cancel`: the `cancelOperation` update; accepted means the intent is recorded (X1). */
export async function cancelCommand(ctx: CommandContext, cmd: Cmd<'cancel'>): Promise<ExitCode> {
  const client = await ctx.client();
  const answer = await client.cancel(cmd.operationId, {
    requestedBy: cmd.by,
    reason: cmd.reason,
    ...(cmd.expectedEffect !== undefined ? { expectedEffect: cmd.expectedEffect } : {}),
  });
  if (cmd.json)
    emit(ctx, {
      schema: 'asyncjob.cancel/v1',
      operationId: cmd.operationId,
      accepted: true,
      localState: answer.localState,
    });
  else
    ctx.deps.stdout(
      `cancel recorded for ${cmd.operationId} (now ${answer.localState}); the provider's answer follows: asyncjob watch ${cmd.operationId}\n`,
    );
  return EXIT.ok;
}

/** `decide`: shows the open escalation and its options, or answers it with one of them (A2). */
export async function decideCommand(ctx: CommandContext, cmd: Cmd<'decide'>): Promise<ExitCode> {
  const client = await ctx.client();
  // An ended operation has nothing to decide: say so, with its state and why it ended.
  const execution = await client.describeOperation(cmd.operationId);
  if (execution.executionStatus !== 'RUNNING') {
    throw new OperationEndedError(
      cmd.operationId,
      execution.executionStatus,
      execution.localState,
      execution.failure && { executionStatus: execution.executionStatus, ...execution.failure },
    );
  }
  const escalation = await client.escalation(cmd.operationId);
  if (!cmd.answer) {
    if (cmd.json) {
      emit(ctx, {
        schema: 'asyncjob.decide/v1',
        operationId: cmd.operationId,
        action: 'show',
        escalation: escalation
          ? {
              reason: escalation.reason,
              text: escalation.text,
              options: escalation.options,
              decisionDeadlineAt: new Date(escalation.decisionDeadlineMs).toISOString(),
            }
          : null,
      });
    } else if (!escalation) {
      ctx.deps.stdout(`operation ${cmd.operationId} has no open escalation\n`);
    } else {
      ctx.deps.stdout(`${escalation.text}\n\noptions offered:\n${escalation.options.map(optionText).join('\n')}\n`);
    }
    return EXIT.ok;
  }

  // Checked here first for a clear message; the workflow's update validator checks again (A2).
  const a = cmd.answer;
  if (!escalation)
    throw new AsyncJobRequestRefused(
      cmd.operationId,
      'ASYNCJOB_ERR_NO_OPEN_ESCALATION',
      `operation ${cmd.operationId} has no open escalation to decide`,
    );
  const offered = escalation.options.find((o) => o.option === a.option);
  if (!offered) {
    throw new AsyncJobRequestRefused(
      cmd.operationId,
      'ASYNCJOB_ERR_OPTION_NOT_OFFERED',
      `"${a.option}" was not offered for ${escalation.reason}; offered: ${escalation.options.map((o) => o.option).join(', ')}`,
    );
  }
  if (a.option === 'extend') {
    if (a.extendMs === undefined || a.checks === undefined) {
      throw new UsageError(
        `--option extend names its bounds: --extend D --checks N (offered: at most ${formatDuration(offered.extendMs ?? 0)} and ${offered.extraStatusRequests ?? 0} checks)`,
        'decide',
      );
    }
    const over: string[] = [];
    if (a.extendMs > (offered.extendMs ?? 0))
      over.push(`--extend ${formatDuration(a.extendMs)} exceeds the offered ${formatDuration(offered.extendMs ?? 0)}`);
    if (a.checks > (offered.extraStatusRequests ?? 0))
      over.push(`--checks ${a.checks} exceeds the offered ${offered.extraStatusRequests ?? 0}`);
    if ((a.transportFailures ?? 0) > (offered.extraTransportFailures ?? 0))
      over.push(
        `--transport-failures ${a.transportFailures} exceeds the offered ${offered.extraTransportFailures ?? 0}`,
      );
    if ((a.rateLimited ?? 0) > (offered.extraRateLimited ?? 0))
      over.push(`--rate-limited ${a.rateLimited} exceeds the offered ${offered.extraRateLimited ?? 0}`);
    if (over.length > 0)
      throw new AsyncJobRequestRefused(cmd.operationId, 'ASYNCJOB_ERR_DECISION_OUT_OF_BOUNDS', over.join('; '));
  } else {
    const extension = [
      a.extendMs !== undefined && '--extend',
      a.checks !== undefined && '--checks',
      a.transportFailures !== undefined && '--transport-failures',
      a.rateLimited !== undefined && '--rate-limited',
    ].filter(Boolean);
    if (extension.length > 0)
      throw new UsageError(`${extension.join(', ')}: only --option extend takes extension bounds`, 'decide');
  }
  if (a.option === 'adopt_job' && (a.jobId === undefined || !(offered.jobIds ?? []).includes(a.jobId))) {
    throw new UsageError(`--option adopt_job needs --job-id, one of: ${(offered.jobIds ?? []).join(', ')}`, 'decide');
  }
  if (a.option !== 'adopt_job' && a.jobId !== undefined)
    throw new UsageError('--job-id: only --option adopt_job names a job', 'decide');

  const decision = {
    option: a.option,
    approvedBy: a.by,
    reason: a.reason,
    ...(a.extendMs !== undefined ? { extendMs: a.extendMs } : {}),
    ...(a.checks !== undefined ? { extraStatusRequests: a.checks } : {}),
    ...(a.transportFailures !== undefined ? { extraTransportFailures: a.transportFailures } : {}),
    ...(a.rateLimited !== undefined ? { extraRateLimited: a.rateLimited } : {}),
    ...(a.jobId !== undefined ? { jobId: a.jobId } : {}),
  } as Decision; // the option was found among the offered ones, so it is a decision option
  const answer = await client.decide(cmd.operationId, decision);
  if (cmd.json)
    emit(ctx, {
      schema: 'asyncjob.decide/v1',
      operationId: cmd.operationId,
      action: 'decided',
      option: a.option,
      accepted: true,
      localState: answer.localState,
    });
  else ctx.deps.stdout(`decision "${a.option}" recorded for ${cmd.operationId} (now ${answer.localState})\n`);
  return EXIT.ok;
}
