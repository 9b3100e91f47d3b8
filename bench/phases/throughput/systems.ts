/**
 * The three systems of figures 1 and 2, each running one operation to a verified result with the same calls and
 * the same poll timing: asyncjob (durable, journaled), a bare Temporal workflow (durable, no record keeping) and a
 * naive in-process loop (no durability: the ceiling).
 */
import type { BASELINE_NAMESPACES, BenchContext, Deployment } from '../../lib/context';
import { FINAL_STATES, type PlainCalls } from '../../lib/provider-calls';
import { sleepMs, withTimeout } from '../../lib/stats';
import type { BareJobInput, BareJobResult } from '../../bare/workflows';
import { plannedDelayMs } from '../../bare/poll-plan';
import { delaysOf, type BenchPolicy, type SystemName } from './policies';

/** One operation to run: a job that succeeds on its `reads`-th status read, under `policy`. */
export interface Job {
  script: string;
  reads: number;
  policy: BenchPolicy;
}

/** A finished operation: the ID of its workflow (naive: the job's), its namespace, and the status reads it took. */
interface Done {
  id: string;
  namespace: string;
  statusReads: number;
}

/** Runs one operation to a verified result (throws otherwise). */
export type RunOne = (job: Job) => Promise<Done>;

/** One operation that takes longer than this fails the run instead of hanging it. */
const OPERATION_TIMEOUT_MS = 600_000;

/** Status reads asyncjob sent beyond the script's (a read lost to a timeout under load is sent again). */
let extraReads = 0;

/** Status reads asyncjob sent beyond its scripts' so far in this process. */
export const asyncjobExtraStatusReads = (): number => extraReads;

let bareSeq = 0;

/** Runs one operation as the bare workflow `workflowType` (`bench/bare/workflows.ts`) on `dep`'s bare worker. */
function bareRunner(
  ctx: BenchContext,
  dep: Deployment,
  workflowType: string,
  system: keyof typeof BASELINE_NAMESPACES,
): RunOne {
  const namespace = dep.bareNamespace(system);
  return async ({ script, reads, policy }) => {
    const input: BareJobInput = {
      payload: { report: 'bench', scenario: script },
      ...delaysOf(policy),
      maxStatusReads: 1_000,
    };
    const workflowId = `${dep.bareTaskQueue}-${++bareSeq}`;
    const result = (await withTimeout(
      ctx
        .clientIn(namespace)
        .workflow.execute(workflowType, { taskQueue: dep.bareTaskQueue, workflowId, args: [input] }),
      OPERATION_TIMEOUT_MS,
      `bare workflow ${workflowId}`,
    )) as BareJobResult;
    if (result.statusReads !== reads)
      throw new Error(`${workflowType} read ${result.statusReads} times, expected ${reads}`);
    return { id: workflowId, namespace, statusReads: reads };
  };
}

/** Temporal's recommended polling patterns (figure 2's anchors): a heartbeating activity, activity retries. */
export function recommendedPatterns(ctx: BenchContext, dep: Deployment): Record<'heartbeat' | 'retry', RunOne> {
  return {
    heartbeat: bareRunner(ctx, dep, 'BareHeartbeatJobWorkflow', 'bare-heartbeat'),
    retry: bareRunner(ctx, dep, 'BareRetryJobWorkflow', 'bare-retry'),
  };
}

/** How each system runs one operation: over `dep`'s worker process and simulator, the naive loop over `calls`. */
export function systems(ctx: BenchContext, dep: Deployment, calls: PlainCalls): Record<SystemName, RunOne> {
  return {
    async asyncjob({ script, reads, policy }) {
      const handle = await dep.client.start(dep.request('main', script, delaysOf(policy)));
      const summary = await withTimeout(
        handle.result(),
        OPERATION_TIMEOUT_MS,
        `asyncjob operation ${handle.operationId}`,
      );
      // A read that failed under load (e.g. a headers timeout) is planned again and counted: more reads, same job.
      if (summary.localState !== 'succeeded' || summary.result === null || summary.statusRequestsUsed < reads) {
        throw new Error(
          `asyncjob operation ${handle.operationId} ended ${summary.localState} after ${summary.statusRequestsUsed} reads, expected succeeded after ${reads}`,
        );
      }
      extraReads += summary.statusRequestsUsed - reads;
      return { id: handle.operationId, namespace: ctx.server.namespace, statusReads: summary.statusRequestsUsed };
    },
    bare: bareRunner(ctx, dep, 'BareJobWorkflow', 'bare'),
    async naive({ script, reads: expected, policy }) {
      let startedAtMs = Date.now();
      const jobId = await calls.createJob({ report: 'bench', scenario: script });
      for (let reads = 0; ;) {
        const waitMs = startedAtMs + plannedDelayMs(reads + 1, policy, Math.random()) - Date.now();
        if (waitMs > 0) await sleepMs(waitMs);
        startedAtMs = Date.now();
        const state = await calls.readStatus(jobId);
        reads += 1;
        if (state === 'succeeded') {
          if (reads !== expected) throw new Error(`naive loop read ${reads} times, expected ${expected}`);
          await calls.collectResult(jobId);
          return { id: jobId, namespace: '', statusReads: reads };
        }
        if (FINAL_STATES.has(state)) throw new Error(`job ${jobId} ended ${state}`);
      }
    },
  };
}
