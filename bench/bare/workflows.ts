/**
 * The bare Temporal baseline: one workflow that creates a job, sleeps and reads its status until it is final,
 * then downloads and checks the result. Same delays as asyncjob's planner (bounded jitter), no record keeping:
 * what Temporal alone costs for the same calls. Bundled separately from asyncjob's workflows.
 */
import { ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { BareActivities } from './activities';

/** The bare workflow's input. */
export interface BareJobInput {
  payload: unknown;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Gives up after this many status reads. */
  maxStatusReads: number;
}

/** The bare workflow's result. */
export interface BareJobResult {
  jobId: string;
  sha256: string;
  sizeBytes: number;
  statusReads: number;
}

const { bareCreateJob, bareReadStatus, bareCollectResult } = proxyActivities<BareActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 1 },
});

/** Drives one job to a verified result. */
export async function BareJobWorkflow(input: BareJobInput): Promise<BareJobResult> {
  const jobId = await bareCreateJob(input.payload);
  for (let reads = 0; reads < input.maxStatusReads;) {
    const raw = Math.min(input.maxDelayMs, input.baseDelayMs * 2 ** Math.min(reads, 60));
    await sleep(Math.min(raw, Math.max(1, Math.ceil(raw * (0.5 + 0.5 * Math.random())))));
    const state = await bareReadStatus(jobId);
    reads += 1;
    if (state === 'succeeded') return { ...(await bareCollectResult(jobId)), statusReads: reads };
    if (state === 'failed' || state === 'cancelled' || state === 'expired') {
      throw ApplicationFailure.create({
        type: 'ASYNCJOB_BENCH_ERR_JOB_ENDED',
        message: `job ${jobId} ended ${state}`,
        nonRetryable: true,
      });
    }
  }
  throw ApplicationFailure.create({
    type: 'ASYNCJOB_BENCH_ERR_BUDGET',
    message: `job ${jobId} not final after ${input.maxStatusReads} reads`,
    nonRetryable: true,
  });
}
