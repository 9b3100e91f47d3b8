/**
 * The bare Temporal baselines. `BareJobWorkflow` creates a job, reads its status until it is final, then
 * downloads and checks the result; `BareHeartbeatJobWorkflow` and `BareRetryJobWorkflow` make the same calls with
 * the reads in the two patterns Temporal recommends for polling (a heartbeating activity, activity retries). Same poll timing as asyncjob (./poll-plan.ts: each read planned from the
 * previous call's start with the same backoff and bounded jitter, and a timer only when that instant is still
 * ahead at the workflow task), no record keeping: what Temporal alone costs for the same calls. Bundled
 * separately from asyncjob's workflows.
 */
import { ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { BareActivities } from './activities';
import { plannedDelayMs, type PollDelays } from './poll-plan';

/** The bare workflow's input. */
export interface BareJobInput extends PollDelays {
  payload: unknown;
  /** Gives up after this many status reads. */
  maxStatusReads: number;
}

/** The bare workflow's result. */
export interface BareJobResult {
  jobId: string;
  sha256: string;
  sizeBytes: number;
  statusReads: number;
  /** Timers started (reads whose planned instant was still ahead at the workflow task). */
  timersStarted: number;
}

const { bareCreateJob, bareReadStatus, bareCollectResult } = proxyActivities<BareActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 1 },
});

/** Drives one job to a verified result. */
export async function BareJobWorkflow(input: BareJobInput): Promise<BareJobResult> {
  const created = await bareCreateJob(input.payload);
  const jobId = created.value;
  let dueAtMs = created.startedAtMs + plannedDelayMs(1, input, Math.random());
  let timersStarted = 0;
  for (let reads = 0; reads < input.maxStatusReads;) {
    // As asyncjob: a read already due runs in this workflow task; only a read still ahead costs a timer.
    const waitMs = dueAtMs - Date.now();
    if (waitMs > 0) {
      timersStarted += 1;
      await sleep(waitMs);
    }
    const answer = await bareReadStatus(jobId);
    reads += 1;
    const state = answer.value;
    if (state === 'succeeded') return { ...(await bareCollectResult(jobId)), statusReads: reads, timersStarted };
    if (state === 'failed' || state === 'cancelled' || state === 'expired') {
      throw ApplicationFailure.create({
        type: 'ASYNCJOB_BENCH_ERR_JOB_ENDED',
        message: `job ${jobId} ended ${state}`,
        nonRetryable: true,
      });
    }
    dueAtMs = answer.startedAtMs + plannedDelayMs(reads + 1, input, Math.random());
  }
  throw ApplicationFailure.create({
    type: 'ASYNCJOB_BENCH_ERR_BUDGET',
    message: `job ${jobId} not final after ${input.maxStatusReads} reads`,
    nonRetryable: true,
  });
}

/**
 * The bare workflow with Temporal's recommended pattern for frequent polling: the status reads in one heartbeating
 * activity that sleeps the same planned delays between them. Create and collect as {@link BareJobWorkflow}.
 */
export async function BareHeartbeatJobWorkflow(input: BareJobInput): Promise<BareJobResult> {
  const created = await bareCreateJob(input.payload);
  // As Temporal's sample: one heartbeat per read, the heartbeat timeout longer than the interval between reads.
  const { bareHeartbeatPoll } = proxyActivities<BareActivities>({
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: input.maxDelayMs + 30_000,
    retry: { maximumAttempts: 1 },
  });
  const statusReads = await bareHeartbeatPoll(created.value, input);
  return { ...(await bareCollectResult(created.value)), statusReads, timersStarted: 0 };
}

/**
 * The bare workflow with Temporal's recommended pattern for infrequent polling: an activity whose attempts are the
 * reads, its retry policy the poll policy's backoff without jitter (from `baseDelayMs`, doubling up to `maxDelayMs`:
 * a fixed interval where they are equal). The first read is the first attempt, at once; asyncjob and the other
 * baselines wait a planned delay before it.
 */
export async function BareRetryJobWorkflow(input: BareJobInput): Promise<BareJobResult> {
  const created = await bareCreateJob(input.payload);
  const { bareRetryPoll } = proxyActivities<BareActivities>({
    startToCloseTimeout: '1 minute',
    retry: {
      initialInterval: input.baseDelayMs,
      backoffCoefficient: 2,
      maximumInterval: input.maxDelayMs,
      maximumAttempts: input.maxStatusReads,
      nonRetryableErrorTypes: ['ASYNCJOB_BENCH_ERR_JOB_ENDED'],
    },
  });
  const statusReads = await bareRetryPoll(created.value);
  return { ...(await bareCollectResult(created.value)), statusReads, timersStarted: 0 };
}
