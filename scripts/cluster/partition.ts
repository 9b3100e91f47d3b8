/**
 * What a partition did to the work of the worker it cut off, from Temporal's own records: the provider-call
 * activities that worker held when it was cut (the server's pending activities naming it as their last worker),
 * then, from each operation's history after the run, how each one ended. An activity the cut-off worker could not
 * report on times out at the server (its heartbeat stops arriving) and its operation goes on with an activity
 * another worker runs; one the worker finished after it was joined again is reported by it, late.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { PARTITIONED_SLOT } from './chaos';
import type { WorkerFleet } from './fleet';
import type { PartitionSpan } from './held-deliveries';
import type { Hosts } from './hosts';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** One activity the cut-off worker held. */
export interface HeldActivity {
  workflowId: string;
  runId: string;
  activityId: string;
}

/** How the held activities ended. */
export interface PartitionOutcome {
  held: number;
  /** Timed out at the server, and the operation's next activity was run by another worker. */
  resumedElsewhere: number;
  /** Finished by the cut-off worker itself once it was joined again (reported late, or its operation's next activity taken by it). */
  finishedAfterRestore: number;
  /** An activity that is not in its history or never closed, one line each. */
  unexplained: string[];
}

const isWorker = (identity: string | null | undefined, pid: number): boolean =>
  identity?.startsWith(`${pid}@`) ?? false;

/** The activities of the running operations on `taskQueue` whose last worker is process `pid`. */
export async function activitiesHeldBy(client: Client, taskQueue: string, pid: number): Promise<HeldActivity[]> {
  const held: HeldActivity[] = [];
  const running = client.workflow.list({ query: `TaskQueue = "${taskQueue}" AND ExecutionStatus = "Running"` });
  for await (const workflow of running) {
    const description = await client.workflow.getHandle(workflow.workflowId, workflow.runId).describe();
    for (const activity of description.raw.pendingActivities ?? [])
      if (isWorker(activity.lastWorkerIdentity, pid))
        held.push({ workflowId: workflow.workflowId, runId: workflow.runId, activityId: activity.activityId! });
  }
  return held;
}

const id = (value: unknown): string => String(value);

/** How one held activity ended, from its operation's history. */
function endOf(events: HistoryEvent[], activity: HeldActivity, pid: number): keyof PartitionOutcome | string {
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityId === activity.activityId);
  if (!scheduled) return `${activity.workflowId}: activity ${activity.activityId} is not in the history`;
  const scheduledId = id(scheduled.eventId);
  const closed = events.find((e) =>
    [
      e.activityTaskCompletedEventAttributes,
      e.activityTaskFailedEventAttributes,
      e.activityTaskTimedOutEventAttributes,
      e.activityTaskCanceledEventAttributes,
    ].some((attributes) => attributes && id(attributes.scheduledEventId) === scheduledId),
  );
  const started = events.find((e) => id(e.activityTaskStartedEventAttributes?.scheduledEventId) === scheduledId);
  if (closed?.activityTaskTimedOutEventAttributes) {
    const elsewhere = events.some(
      (e) =>
        Number(e.eventId) > Number(closed.eventId) &&
        e.activityTaskStartedEventAttributes &&
        !isWorker(e.activityTaskStartedEventAttributes.identity, pid),
    );
    // A worker joined again soon enough may have taken the operation's next activity itself.
    return elsewhere ? 'resumedElsewhere' : 'finishedAfterRestore';
  }
  if (!closed) return `${activity.workflowId}: activity ${activity.activityId} never closed`;
  // Completed, failed or cancelled: reported by the worker that ran it, the cut-off one late or another after a retry.
  return isWorker(started?.activityTaskStartedEventAttributes?.identity, pid)
    ? 'finishedAfterRestore'
    : 'resumedElsewhere';
}

/** How the activities `held` by process `pid` ended. */
export async function partitionOutcome(client: Client, held: HeldActivity[], pid: number): Promise<PartitionOutcome> {
  const outcome: PartitionOutcome = {
    held: held.length,
    resumedElsewhere: 0,
    finishedAfterRestore: 0,
    unexplained: [],
  };
  for (const activity of held) {
    const history = await client.workflow.getHandle(activity.workflowId, activity.runId).fetchHistory();
    const end = endOf(history.events ?? [], activity, pid);
    if (end === 'resumedElsewhere') outcome.resumedElsewhere++;
    else if (end === 'finishedAfterRestore') outcome.finishedAfterRestore++;
    else outcome.unexplained.push(end);
  }
  return outcome;
}

/** What the report says of the partition. */
export interface PartitionReport extends PartitionOutcome {
  /** The cut-off worker's pid, and how long it was cut off, ms. */
  pid: number;
  cutForMs: number;
  problems: string[];
}

/** How long a partition waits for the worker to hold a provider call before it cuts anyway, ms. */
const HOLD_WAIT_MS = 60_000;

/** The partition of one run: cut the worker of slot {@link PARTITIONED_SLOT} off, note what it held, join it again. */
export class Partition {
  private held: HeldActivity[] = [];
  private pid: number | undefined;
  private cutForMs = 0;
  private cutAtMs: number | undefined;
  private restoredAtMs: number | undefined;

  constructor(
    private readonly hosts: Hosts,
    private readonly fleet: WorkerFleet,
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly durationMs: number,
  ) {}

  /**
   * Cuts the worker off for the duration while it holds provider calls, noting which; resolves once it is joined
   * again. A partition of a worker holding nothing would prove nothing, so it waits (up to {@link HOLD_WAIT_MS})
   * until the server lists a call the worker runs, then cuts. The calls it holds are those the server still lists
   * after the cut: a call that ended in between was reported before the cut and is not the partition's.
   */
  async run(): Promise<void> {
    const waitUntil = Date.now() + HOLD_WAIT_MS;
    for (;;) {
      this.pid = this.fleet.pidOf(PARTITIONED_SLOT);
      const holds = this.pid !== undefined && (await this.heldNow()).length > 0;
      if (holds || Date.now() >= waitUntil) break;
      await sleep(250);
    }
    const cutAt = Date.now();
    this.cutAtMs = cutAt;
    await this.hosts.partition(PARTITIONED_SLOT);
    try {
      this.held = await this.heldNow();
      await sleep(Math.max(0, cutAt + this.durationMs - Date.now()));
    } finally {
      await this.hosts.restore(PARTITIONED_SLOT);
      this.restoredAtMs = Date.now();
      this.cutForMs = this.restoredAtMs - cutAt;
    }
  }

  /** When the worker was cut off and joined again; undefined unless the partition has run. */
  span(): PartitionSpan | undefined {
    return this.cutAtMs !== undefined && this.restoredAtMs !== undefined
      ? { cutAtMs: this.cutAtMs, restoredAtMs: this.restoredAtMs }
      : undefined;
  }

  private async heldNow(): Promise<HeldActivity[]> {
    return this.pid === undefined ? [] : activitiesHeldBy(this.client, this.taskQueue, this.pid);
  }

  /** How the held activities ended (after the run), and what that proves or fails to. */
  async outcome(): Promise<PartitionReport> {
    const problems: string[] = [];
    if (this.pid === undefined)
      return { ...emptyOutcome(), pid: 0, cutForMs: 0, problems: ['no worker was running when the partition came'] };
    const outcome = await partitionOutcome(this.client, this.held, this.pid);
    if (outcome.held === 0)
      problems.push('the cut-off worker held no provider call when it was cut: the partition proved nothing');
    else if (outcome.resumedElsewhere === 0)
      problems.push(`none of the ${outcome.held} provider calls the cut-off worker held was resumed by another worker`);
    problems.push(...outcome.unexplained.map((line) => `partition: ${line}`));
    return { ...outcome, pid: this.pid, cutForMs: this.cutForMs, problems };
  }
}

const emptyOutcome = (): PartitionOutcome => ({
  held: 0,
  resumedElsewhere: 0,
  finishedAfterRestore: 0,
  unexplained: [],
});
