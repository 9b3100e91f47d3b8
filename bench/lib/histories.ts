/**
 * Workflow histories read for their timing: each event's type and server time, and the queueing of workflow and
 * activity tasks (schedule-to-start: how long a task waited for a worker to take it, the first sign of a server
 * or worker that cannot keep up).
 */
import { temporal as proto } from '@temporalio/proto';
import type { BenchContext } from './context';
import { runPool } from './stats';

const EventType = proto.api.enums.v1.EventType;

/** One history event with what the bench reads from it. */
export interface TimedEvent {
  id: number;
  type: string;
  /** The server's time of the event, ms since the epoch (sub-millisecond). */
  atMs: number;
  /** For a task's started event: the ID of its scheduled event. */
  scheduledEventId?: number;
  /** For a signal: its name; for a scheduled activity: its type. */
  name?: string;
}

function timestampMs(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(ts?.seconds ?? 0) * 1000 + (ts?.nanos ?? 0) / 1e6;
}

/** The events of workflow `workflowId`, in order. */
export async function timedEvents(ctx: BenchContext, workflowId: string): Promise<TimedEvent[]> {
  const history = await ctx.temporal.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).map((e) => {
    const type = EventType[e.eventType ?? 0] ?? String(e.eventType);
    const scheduled =
      e.workflowTaskStartedEventAttributes?.scheduledEventId ?? e.activityTaskStartedEventAttributes?.scheduledEventId;
    const name =
      e.workflowExecutionSignaledEventAttributes?.signalName ??
      e.activityTaskScheduledEventAttributes?.activityType?.name ??
      undefined;
    return {
      id: Number(e.eventId ?? 0),
      type: type.replace(/^EVENT_TYPE_/, ''),
      atMs: timestampMs(e.eventTime),
      ...(scheduled !== undefined && scheduled !== null ? { scheduledEventId: Number(scheduled) } : {}),
      ...(name ? { name } : {}),
    };
  });
}

/** Schedule-to-start of every task of one kind in `events` scheduled after event `afterId`, ms. */
function scheduleToStartMs(
  events: readonly TimedEvent[],
  kind: 'WORKFLOW_TASK' | 'ACTIVITY_TASK',
  afterId = 0,
): number[] {
  const byId = new Map(events.map((e) => [e.id, e]));
  const out: number[] = [];
  for (const e of events) {
    if (e.type !== `${kind}_STARTED` || e.scheduledEventId === undefined) continue;
    const scheduled = byId.get(e.scheduledEventId);
    if (scheduled && scheduled.id > afterId) out.push(e.atMs - scheduled.atMs);
  }
  return out;
}

/** Which tasks of an operation count: all, or those after its first activity completed (its create). */
export type TaskSpan = 'all' | 'after_create';

/** Workflow and activity task schedule-to-start over the histories of `ids`, ms. */
export async function taskQueueing(
  ctx: BenchContext,
  ids: readonly string[],
  span: TaskSpan = 'all',
): Promise<{ workflowTaskMs: number[]; activityTaskMs: number[] }> {
  const workflowTaskMs: number[] = [];
  const activityTaskMs: number[] = [];
  await runPool(ids.length, 8, async (i) => {
    const events = await timedEvents(ctx, ids[i]!);
    const created = span === 'after_create' ? events.find((e) => e.type === 'ACTIVITY_TASK_COMPLETED')?.id : 0;
    workflowTaskMs.push(...scheduleToStartMs(events, 'WORKFLOW_TASK', created ?? 0));
    activityTaskMs.push(...scheduleToStartMs(events, 'ACTIVITY_TASK', created ?? 0));
  });
  return { workflowTaskMs, activityTaskMs };
}
