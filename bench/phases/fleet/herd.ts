/**
 * One herd of figure 4: operations started in the same second against one provider, each reading its job's
 * status until the 4th read says `succeeded`, by asyncjob (durable, over the dev server) or by the naive loop
 * (the same calls and the same planned instants, `bench/bare/poll-plan.ts`, with no engine: what the policy's
 * jitter alone makes of the herd).
 */
import type { RequestRecord } from '../../../src/simulator';
import { plannedDelayMs } from '../../bare/poll-plan';
import type { BenchContext, Deployment } from '../../lib/context';
import { FINAL_STATES, plainCalls } from '../../lib/provider-calls';
import { startServerWindow } from '../../lib/server-load';
import { nowMs, round, sleepMs, withTimeout } from '../../lib/stats';
import { pressure } from './pressure';
import type { HerdRound } from './result';

/** Backoff from 1 s to 4 s with bounded jitter (50-100%), asyncjob's default. */
export const FLEET_POLICY = { baseDelayMs: 1_000, maxDelayMs: 4_000 } as const;

/** The `reads4` script: the 4th status read sees `succeeded`. */
const SCRIPT = 'reads4';
const READS = 4;

/** The provider's requests since `fromMs` (the simulator's clock, this host's). */
async function requestsSince(dep: Deployment, provider: string, fromMs: number): Promise<RequestRecord[]> {
  return (await dep.sims[provider]!.requests()).filter((r) => r.atMs >= fromMs);
}

function roundOf(
  system: HerdRound['system'],
  operations: number,
  records: readonly RequestRecord[],
  startSeconds: number,
  completeSeconds: number,
): HerdRound {
  const creates = records.filter((r) => r.action === 'create').map((r) => r.atMs);
  return {
    system,
    operations,
    statusReadsPerOperation: READS,
    startSeconds: round(startSeconds, 2),
    createSpreadSeconds: round((Math.max(...creates) - Math.min(...creates)) / 1000, 2),
    completeSeconds: round(completeSeconds, 2),
    all: pressure(records),
    statusReads: pressure(records.filter((r) => r.action === 'status')),
  };
}

/** A herd of asyncjob operations on provider `provider`, with the server's load over it. */
export async function asyncjobHerd(
  ctx: BenchContext,
  dep: Deployment,
  provider: string,
  operations: number,
  queueLimitMs: number,
): Promise<HerdRound> {
  const fromMs = Date.now();
  const window = startServerWindow(ctx);
  const t0 = nowMs();
  const handles = await Promise.all(
    Array.from({ length: operations }, () => dep.client.start(dep.request(provider, SCRIPT, FLEET_POLICY))),
  );
  const startSeconds = (nowMs() - t0) / 1000;
  // Every result settles before anything is judged, so no call is left in flight when the run stops.
  const settled = await withTimeout(Promise.allSettled(handles.map((h) => h.result())), 600_000, `fleet herd`);
  const completeSeconds = (nowMs() - t0) / 1000;
  const bad = settled.flatMap((s, i) =>
    s.status === 'rejected'
      ? [`${handles[i]!.operationId}: ${String(s.reason)}`]
      : s.value.localState !== 'succeeded' || s.value.statusRequestsUsed < READS
        ? [`${s.value.operationId} ${s.value.localState} after ${s.value.statusRequestsUsed} reads`]
        : [],
  );
  if (bad.length > 0)
    throw new Error(`fleet: ${bad.length} operations did not succeed after ${READS} reads (first: ${bad[0]})`);
  // The herd's start is a burst the server queues by design (creates spread over `createSpreadSeconds`); what
  // would smear the reads is queueing after the creates, so that is what says whether the server kept up.
  const server = await window.stop(
    handles.map((h) => h.operationId),
    queueLimitMs,
    'after_create',
  );
  const records = await requestsSince(dep, provider, fromMs);
  return { ...roundOf('asyncjob', operations, records, startSeconds, completeSeconds), server };
}

/** The same herd by the naive loop, in this process, against the same provider's simulator. */
export async function naiveHerd(
  ctx: BenchContext,
  dep: Deployment,
  provider: string,
  operations: number,
): Promise<HerdRound> {
  const fromMs = Date.now();
  const calls = plainCalls({ baseUrl: dep.sims[provider]!.url, token: ctx.token }, operations);
  const t0 = nowMs();
  try {
    await withTimeout(
      Promise.all(
        Array.from({ length: operations }, async () => {
          let startedAtMs = Date.now();
          const jobId = await calls.createJob({ report: 'bench', scenario: SCRIPT });
          for (let reads = 0; ;) {
            const waitMs = startedAtMs + plannedDelayMs(reads + 1, FLEET_POLICY, Math.random()) - Date.now();
            if (waitMs > 0) await sleepMs(waitMs);
            startedAtMs = Date.now();
            const state = await calls.readStatus(jobId);
            reads += 1;
            if (state === 'succeeded') {
              await calls.collectResult(jobId);
              return;
            }
            if (FINAL_STATES.has(state) || reads >= READS) throw new Error(`fleet: naive job ${jobId} read ${state}`);
          }
        }),
      ),
      600_000,
      'naive fleet herd',
    );
  } finally {
    await calls.close();
  }
  const completeSeconds = (nowMs() - t0) / 1000;
  const records = await requestsSince(dep, provider, fromMs);
  return roundOf('naive', operations, records, 0, completeSeconds);
}
