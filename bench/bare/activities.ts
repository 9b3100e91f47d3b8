/**
 * The bare Temporal baseline's activities: the same three provider calls as asyncjob's (create, status read,
 * result download with SHA-256 check), with no journal, no snapshot, no store, no redaction. Create and status
 * read also return when they started, from which the workflow plans the next read as asyncjob does.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { FINAL_STATES, plainCalls, type PlainProvider, type VerifiedResult } from '../lib/provider-calls';
import { plannedDelayMs, type PollDelays } from './poll-plan';

/** A provider call's answer and the epoch ms at which the call started (asyncjob's step time). */
interface BareAnswer<T> {
  value: T;
  startedAtMs: number;
}

/** The bare activities. */
export interface BareActivities {
  bareCreateJob(payload: unknown): Promise<BareAnswer<string>>;
  bareReadStatus(jobId: string): Promise<BareAnswer<string>>;
  bareCollectResult(jobId: string): Promise<VerifiedResult>;
  /**
   * Temporal's pattern for frequent polling: one activity reads until the job is final, sleeping the planned delay
   * between reads and heartbeating; returns the reads it made.
   */
  bareHeartbeatPoll(jobId: string, delays: PollDelays): Promise<number>;
  /**
   * Temporal's pattern for infrequent polling: each attempt reads once and fails while the job runs, so the
   * activity's retry policy is the wait; returns the attempt (the reads made) that saw it succeed.
   */
  bareRetryPoll(jobId: string): Promise<number>;
}

/** A job that ended otherwise than succeeded: not retried. */
function jobEnded(jobId: string, state: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'ASYNCJOB_BENCH_ERR_JOB_ENDED',
    message: `job ${jobId} ended ${state}`,
    nonRetryable: true,
  });
}

async function timed<T>(call: () => Promise<T>): Promise<BareAnswer<T>> {
  const startedAtMs = Date.now();
  return { value: await call(), startedAtMs };
}

/** Activities over one provider; `close` releases the pooled connections. */
export function createBareActivities(provider: PlainProvider): { activities: BareActivities; close(): Promise<void> } {
  const calls = plainCalls(provider);
  return {
    activities: {
      bareCreateJob: (payload) => timed(() => calls.createJob(payload)),
      bareReadStatus: (jobId) => timed(() => calls.readStatus(jobId)),
      bareCollectResult: (jobId) => calls.collectResult(jobId),
      async bareHeartbeatPoll(jobId, delays) {
        const context = Context.current();
        for (let reads = 1; ; reads++) {
          const startedAtMs = Date.now();
          const state = await calls.readStatus(jobId);
          if (state === 'succeeded') return reads;
          if (FINAL_STATES.has(state)) throw jobEnded(jobId, state);
          context.heartbeat(reads);
          await context.sleep(Math.max(0, startedAtMs + plannedDelayMs(reads + 1, delays, Math.random()) - Date.now()));
        }
      },
      async bareRetryPoll(jobId) {
        const state = await calls.readStatus(jobId);
        if (state === 'succeeded') return Context.current().info.attempt;
        if (FINAL_STATES.has(state)) throw jobEnded(jobId, state);
        throw ApplicationFailure.create({ type: 'ASYNCJOB_BENCH_PENDING', message: `job ${jobId} is ${state}` });
      },
    },
    close: () => calls.close(),
  };
}
