/**
 * `asyncjob list`: operations by state, provider and escalation reason from Temporal's visibility store (the
 * search attributes AsyncJobState, AsyncJobProvider, AsyncJobEscalationReason), running or closed, newest first.
 */
import type { EscalationReason, LocalState } from '../core/journal';
import { type Cmd, type CommandContext, emit, say } from './command-context';
import { EXIT, type ExitCode } from './exit-codes';

function filters(cmd: Cmd<'list'>): string {
  const given = [
    cmd.state && `state ${cmd.state}`,
    cmd.provider && `provider ${cmd.provider}`,
    cmd.reason && `reason ${cmd.reason}`,
  ].filter(Boolean);
  return given.length > 0 ? ` (${given.join(', ')})` : '';
}

/** Aligned columns. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `list`: see the module comment. `--json` gives `operations`, and `escalated` (the v1 shape) with `--escalated`. */
export async function listCommand(ctx: CommandContext, cmd: Cmd<'list'>): Promise<ExitCode> {
  const client = await ctx.client();
  const listed = await client.list({
    ...(cmd.state !== undefined ? { state: cmd.state as LocalState } : {}),
    ...(cmd.provider !== undefined ? { provider: cmd.provider } : {}),
    ...(cmd.reason !== undefined ? { reason: cmd.reason as EscalationReason } : {}),
    limit: cmd.limit,
  });
  if (cmd.json) {
    const escalated = listed.map(({ operationId, reason, provider, jobId, executionStatus }) => ({
      operationId,
      reason,
      provider,
      jobId,
      executionStatus,
    }));
    emit(ctx, { schema: 'asyncjob.list/v1', operations: listed, ...(cmd.escalated ? { escalated } : {}) });
    return EXIT.ok;
  }
  if (listed.length === 0) {
    say(ctx, `no operations${filters(cmd)}`);
    return EXIT.ok;
  }
  const header = ['OPERATION', 'STATE', 'REASON', 'PROVIDER', 'PROVIDER JOB', 'WORKFLOW', 'STARTED'];
  say(
    ctx,
    table([
      header,
      ...listed.map((o) => [
        o.operationId,
        o.state ?? '-',
        o.reason ?? '-',
        o.provider ?? '-',
        o.jobId ?? '-',
        o.executionStatus,
        o.startedAt,
      ]),
    ]),
  );
  return EXIT.ok;
}
