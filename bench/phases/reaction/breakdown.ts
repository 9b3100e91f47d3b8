/**
 * Where a webhook reaction's time went, read from the operation's history (server times, same host as the
 * bench's and the simulator's clocks): the signal, the workflow task after it, and the read's activity, scheduled
 * and started. When the read came from an activity that was already running (a polling activity woken in its
 * process), only the signal and the read bound it.
 */
import type { BenchContext } from '../../lib/context';
import { timedEvents, type TimedEvent } from '../../lib/histories';
import type { ReactionBreakdown, WebhookSample } from './result';

/** The webhook signal's wire name (src/workflows/messages.ts `webhookSignal`). */
const SIGNAL = 'webhook';

/** A clock tolerance between the server's event times and the simulator's, ms (same host: sub-millisecond). */
const SKEW_MS = 2;

function firstAfter(events: readonly TimedEvent[], afterId: number, type: string): TimedEvent | undefined {
  return events.find((e) => e.id > afterId && e.type === type);
}

/** The breakdown of one sample, or undefined when its history has no webhook signal. */
export async function breakdownOf(ctx: BenchContext, sample: WebhookSample): Promise<ReactionBreakdown | undefined> {
  const events = await timedEvents(ctx, sample.operationId);
  const signal = events.find((e) => e.type === 'WORKFLOW_EXECUTION_SIGNALED' && e.name === SIGNAL);
  if (!signal) return undefined;
  const receiverToSignalMs = signal.atMs - sample.postedAtMs;
  const wftStarted = firstAfter(events, signal.id, 'WORKFLOW_TASK_STARTED');
  const wftCompleted = wftStarted ? firstAfter(events, wftStarted.id, 'WORKFLOW_TASK_COMPLETED') : undefined;
  const scheduled = events.find(
    (e) => e.id > signal.id && e.type === 'ACTIVITY_TASK_SCHEDULED' && e.atMs <= sample.readAtMs + SKEW_MS,
  );
  const started = scheduled
    ? events.find((e) => e.type === 'ACTIVITY_TASK_STARTED' && e.scheduledEventId === scheduled.id)
    : undefined;
  const workflowTask =
    wftStarted && wftStarted.atMs <= sample.readAtMs + SKEW_MS
      ? {
          signalToWorkflowTaskMs: wftStarted.atMs - signal.atMs,
          ...(wftCompleted ? { workflowTaskMs: wftCompleted.atMs - wftStarted.atMs } : {}),
        }
      : {};
  if (scheduled && started && started.atMs <= sample.readAtMs + SKEW_MS)
    return {
      path: 'activity_after_signal',
      receiverToSignalMs,
      ...workflowTask,
      activityDispatchMs: started.atMs - scheduled.atMs,
      activityToReadMs: sample.readAtMs - started.atMs,
    };
  return {
    path: 'activity_already_running',
    receiverToSignalMs,
    ...workflowTask,
    signalToReadMs: sample.readAtMs - signal.atMs,
  };
}
