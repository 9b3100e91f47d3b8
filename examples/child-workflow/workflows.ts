/**
 * A month-end close, as a user's workflow: the sales report and the compliance review of the month run as two
 * asyncjob operations in parallel (child workflows on the asyncjob workers). The close needs both: when one does not
 * succeed, the other is compensated: cancelled at the provider while it still runs, or withdrawn (the report taken
 * back from the finance share) once it has been delivered. In your service, import from 'asyncjob/workflow'.
 */
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import {
  startAsyncJob,
  type AsyncJobHandle,
  type ChildStartRequest,
  type OperationSummary,
} from '../../src/workflow-api';
import type { MonthEndActivities } from './activities';

const { withdrawReport } = proxyActivities<MonthEndActivities>({ startToCloseTimeout: '1 minute' });

/** What the close did with each job. */
export interface MonthEndOutcome {
  month: string;
  /** `closed`: both jobs succeeded; `compensated`: one did not, and the other was undone. */
  outcome: 'closed' | 'compensated';
  jobs: { operationId: string; ended: string }[];
}

/** Where the asyncjob workers run, and how long a human has for the review's escalation. */
export interface MonthEndOptions {
  /** The asyncjob workers' task queue (their ASYNCJOB_TASK_QUEUE); asyncjob's default when absent. */
  taskQueue?: string;
  /** The review's decision deadline: past it, an unanswered escalation ends the review without a result (E2). */
  reviewDecisionMs: number;
}

/** One job of the close: its handle, and how it ended once it has. */
interface Job {
  handle: AsyncJobHandle;
  ended?: string;
}

function demoRequest(operationId: string, scenario: string, policy: Record<string, unknown>): ChildStartRequest {
  return {
    operationId,
    provider: 'demo-reports',
    payload: { report: operationId, scenario },
    authorisedBy: 'policy:month-end-close',
    createDeadline: { afterMs: 60_000 },
    resultDeadline: { afterMs: 10 * 60_000 },
    policy: { baseDelayMs: 500, maxDelayMs: 2_000, ...policy },
  };
}

/** Waits for a job and notes how it ended: its summary, or the typed failure's code. */
async function settle(job: Job): Promise<OperationSummary> {
  try {
    const summary = await job.handle.result();
    job.ended = summary.localState;
    return summary;
  } catch (err) {
    job.ended = err instanceof ApplicationFailure ? String(err.type) : 'failed';
    throw err;
  }
}

/** Undoes a job of a close that cannot complete: cancel it while it runs, withdraw what it delivered. */
async function compensate(job: Job, reason: string): Promise<void> {
  if (job.ended === undefined) await job.handle.cancel(reason, 'the provider stops the job');
  try {
    const summary = await settle(job);
    // It succeeded (before the cancel, or the cancel lost the race, X2): what it delivered is taken back.
    job.ended = await withdrawReport(summary.operationId, summary.jobId ?? null);
  } catch {
    // Ended without a result (cancelled, or failed on its own): nothing was delivered, nothing to undo.
  }
}

/** The month-end close: the report and the review in parallel; both, or neither. */
export async function monthEndClose(month: string, options: MonthEndOptions): Promise<MonthEndOutcome> {
  const childOptions = options.taskQueue !== undefined ? { taskQueue: options.taskQueue } : {};
  const report: Job = {
    handle: await startAsyncJob(demoRequest(`sales-report-${month}`, 'report', {}), childOptions),
  };
  const review: Job = {
    handle: await startAsyncJob(
      demoRequest(`compliance-review-${month}`, 'review', { decisionDeadlineMs: options.reviewDecisionMs }),
      childOptions,
    ),
  };
  const jobs = [report, review];
  const outcome = (kind: MonthEndOutcome['outcome']): MonthEndOutcome => ({
    month,
    outcome: kind,
    jobs: jobs.map((job) => ({ operationId: job.handle.operationId, ended: job.ended ?? 'unknown' })),
  });
  try {
    await Promise.all(jobs.map(settle));
    return outcome('closed');
  } catch {
    const failed = jobs.find((job) => job.ended !== undefined && job.ended !== 'succeeded')!;
    const reason = `month-end close ${month}: ${failed.handle.operationId} ended ${failed.ended}`;
    await Promise.all(jobs.filter((job) => job !== failed).map((job) => compensate(job, reason)));
    return outcome('compensated');
  }
}
