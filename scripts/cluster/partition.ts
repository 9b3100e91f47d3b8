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
  /** Brief cuts before it that found the worker holding nothing, each joined again at once. */
  briefCuts: number;
  problems: string[];
}

/** How long a partition tries to cut the worker while it holds a provider call before it cuts anyway, ms. */
const HOLD_WAIT_MS = 60_000;
/** How long the worker stays joined between a brief cut and the next try, ms. */
const BETWEEN_TRIES_MS = 1_000;

/** The partition of one run: cut the worker of slot {@link PARTITIONED_SLOT} off, note what it held, join it again. */
export class Partition {
  private held: HeldActivity[] = [];
  private pid: number | undefined;
  private readonly cuts: PartitionSpan[] = [];

  constructor(
    private readonly hosts: Hosts,
    private readonly fleet: WorkerFleet,
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly durationMs: number,
  ) {}

  /**
   * Cuts the worker off for the duration while it holds provider calls, noting which; resolves once it is joined
   * again. A partition of a worker holding nothing would prove nothing. Its calls last milliseconds, so no reading
   * of the server can tell one will be running at the cut: the calls it holds are those the server still lists
   * after the cut (one that ended before was reported and is not the partition's). When it lists none, the worker
   * is joined again at once and cut again a moment later, until {@link HOLD_WAIT_MS} has passed; the last try is
   * the partition either way.
   */
  async run(): Promise<void> {
    const giveUpAt = Date.now() + HOLD_WAIT_MS;
    for (;;) {
      await this.untilWorking(giveUpAt);
      const lastTry = Date.now() >= giveUpAt;
      const cutAtMs = Date.now();
      await this.hosts.partition(PARTITIONED_SLOT);
      try {
        this.held = await this.heldNow();
        if (this.held.length > 0 || lastTry) await sleep(Math.max(0, cutAtMs + this.durationMs - Date.now()));
      } finally {
        await this.hosts.restore(PARTITIONED_SLOT);
        this.cuts.push({ cutAtMs, restoredAtMs: Date.now() });
      }
      if (this.held.length > 0 || lastTry) return;
      await sleep(BETWEEN_TRIES_MS);
    }
  }

  /** Waits until the worker of the slot is up and the server lists a call it runs (or until `giveUpAt`). */
  private async untilWorking(giveUpAt: number): Promise<void> {
    for (;;) {
      this.pid = this.fleet.pidOf(PARTITIONED_SLOT);
      if (this.pid !== undefined && (await this.heldNow()).length > 0) return;
      if (Date.now() >= giveUpAt) return;
      await sleep(250);
    }
  }

  /** Each time the worker was cut off and joined again, oldest first; the last is the partition. */
  spans(): readonly PartitionSpan[] {
    return this.cuts;
  }

  /** What the worker holds now by the server's account; nothing known while the server cannot tell (it restarts). */
  private async heldNow(): Promise<HeldActivity[]> {
    if (this.pid === undefined) return [];
    return activitiesHeldBy(this.client, this.taskQueue, this.pid).catch(() => []);
  }

  /** How the held activities ended (after the run), and what that proves or fails to. */
  async outcome(): Promise<PartitionReport> {
    const problems: string[] = [];
    const last = this.cuts.at(-1);
    if (this.pid === undefined || last === undefined)
      return {
        ...emptyOutcome(),
        pid: 0,
        cutForMs: 0,
        briefCuts: 0,
        problems: ['no worker was running when the partition came'],
      };
    const outcome = await partitionOutcome(this.client, this.held, this.pid);
    if (outcome.held === 0)
      problems.push(
        `the cut-off worker held no provider call when it was cut (${this.cuts.length} tries in ${HOLD_WAIT_MS / 1000} s): the partition proved nothing`,
      );
    else if (outcome.resumedElsewhere === 0)
      problems.push(`none of the ${outcome.held} provider calls the cut-off worker held was resumed by another worker`);
    problems.push(...outcome.unexplained.map((line) => `partition: ${line}`));
    const cutForMs = last.restoredAtMs - last.cutAtMs;
    return { ...outcome, pid: this.pid, cutForMs, briefCuts: this.cuts.length - 1, problems };
  }
}

const emptyOutcome = (): PartitionOutcome => ({
  held: 0,
  resumedElsewhere: 0,
  finishedAfterRestore: 0,
  unexplained: [],
});
