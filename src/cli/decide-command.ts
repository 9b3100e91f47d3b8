/**
 * `asyncjob cancel` and `asyncjob decide`: the workflow's `cancelOperation` and `decideOperation` updates, the
 * options offered shown first, and a decision checked on this side first for a clear message (`decision-check.ts`;
 * the workflow checks again, A2). A decision declares its route (`cli`, D5) and, with `--sign` or `--key FILE`,
 * carries the decider's signature over it and the open escalation (D3). An ended operation answers
 * `ASYNCJOB_ERR_OPERATION_FINAL` with its state and why it ended.
 */
import type { EscalationView } from '../client';
import { OperationEndedError } from '../client/errors';
import { canonicalActor } from '../core/actor';
import { DeciderKey, deciderKeyFile } from '../policy/decider-keys';
import type { SigningKey } from './args';
import { type Cmd, type CommandContext, emit } from './command-context';
import { offeredDecision } from './decision-check';
import type { CliClient } from './deps';
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

/** The key file `signWith` names: the decider's own in the keys directory, or the file given. */
function keyFileOf(ctx: CommandContext, signWith: SigningKey, by: string): string {
  return signWith.kind === 'file' ? signWith.path : deciderKeyFile(ctx.deps.env ?? process.env, canonicalActor(by));
}

/** `decide`: shows the open escalation and its options, or answers it with one of them (A2), signed or not (D3). */
export async function decideCommand(ctx: CommandContext, cmd: Cmd<'decide'>): Promise<ExitCode> {
  // The key is read before anything is asked of the server: a missing or wrong key file fails at once.
  const by = cmd.answer?.by ?? '';
  const keyFile = cmd.answer && cmd.signWith ? keyFileOf(ctx, cmd.signWith, by) : undefined;
  const signing = keyFile !== undefined ? { file: keyFile, key: await DeciderKey.readFor(keyFile, by) } : undefined;
  const client = await ctx.client();
  await refuseEndedOperation(client, cmd.operationId);
  const escalation = await client.escalation(cmd.operationId);
  if (!cmd.answer) return showEscalation(ctx, cmd, escalation);
  const chosen = cmd.answer;
  const offered = offeredDecision(cmd.operationId, escalation, chosen);
  const decision =
    signing !== undefined && escalation !== null
      ? signing.key.signedDecision(signing.file, {
          operationId: cmd.operationId,
          escalation,
          decision: offered,
          nowMs: ctx.deps.nowMs(),
        })
      : { ...offered, route: 'cli' as const };
  const answer = await client.decide(cmd.operationId, decision);
  if (cmd.json)
    emit(ctx, {
      schema: 'asyncjob.decide/v1',
      operationId: cmd.operationId,
      action: 'decided',
      option: chosen.option,
      accepted: true,
      localState: answer.localState,
    });
  else
    ctx.deps.stdout(
      `decision "${chosen.option}" recorded for ${cmd.operationId} (now ${answer.localState})${signing ? `, signed with ${signing.key.keyId}` : ''}\n`,
    );
  return EXIT.ok;
}

/** An ended operation has nothing to decide: throws {@link OperationEndedError} with its state and why it ended. */
async function refuseEndedOperation(client: CliClient, operationId: string): Promise<void> {
  const execution = await client.describeOperation(operationId);
  if (execution.executionStatus !== 'RUNNING') {
    throw new OperationEndedError(
      operationId,
      execution.executionStatus,
      execution.localState,
      execution.failure && { executionStatus: execution.executionStatus, ...execution.failure },
    );
  }
}

/** `decide` without `--option`: the open escalation and the options it offers, or that there is none. */
function showEscalation(ctx: CommandContext, cmd: Cmd<'decide'>, escalation: EscalationView | null): ExitCode {
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
