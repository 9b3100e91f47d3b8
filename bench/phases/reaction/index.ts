/**
 * Figure 5: webhook reaction, from a signed webhook arriving at the receiver (the bench's clock just before it
 * posts) to the confirming status read being sent (its arrival in the simulator's request log; same host, same
 * clock). The receiver runs beside the workers in the worker process, as `asyncjob worker` runs it. Operations
 * start one every 500 ms; the job finishes 1.5 s after its create and the webhook is posted then, while the
 * policy's next read is 10-20 s away, so a read before that is the webhook's. Every fifth operation gets no
 * webhook: the baseline, reaction by polling, side by side. Another fifth is cancelled at the same point, while its
 * status loop waits: the cancel's reaction, from the bench's clock before the client's cancel to the provider's
 * cancel request. Where the time goes is read from the histories, and
 * the server's load over the run says whether it was saturated.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import type { RequestRecord } from '../../../src/simulator';
import { deploy, type BenchContext } from '../../lib/context';
import { latencySummary, startServerWindow } from '../../lib/server-load';
import { round, runPool, sleepMs } from '../../lib/stats';
import { breakdownOf } from './breakdown';
import {
  cancelledOperation,
  RETRY_WAIT_POLICY,
  JOB_RUNS_MS,
  polledOperation,
  REACTION_POLICY,
  webhookOperation,
  type Cancelled,
  type Posted,
} from './operations';
import type { ReactionBreakdown, ReactionResult, WebhookSample } from './result';
import { TARGET_P99_MS } from './targets';

export type { ReactionResult } from './result';
export { reactionTargets } from './targets';

/**
 * The roles of each seven operations started in turn: three told by webhook while the status loop waits (the
 * in-process wake), one cancelled then, one polled (baseline), one cancelled during a retry-driven wait, and one told
 * by webhook then (the signal path).
 */
const ROLES = ['webhook', 'webhook', 'cancel', 'webhook', 'polled', 'cancel-retry-wait', 'webhook-retry-wait'] as const;
const START_SPACING_MS = 500;
/** A policy's earliest read after the create: bounded jitter's lower bound (asyncjob's default 0.5). */
const earliestReadMs = (policy: { baseDelayMs: number }) => policy.baseDelayMs * 0.5;

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** `promise` settled into an outcome (so none is left rejected unobserved while others start). */
const settle = <T>(promise: Promise<T>): Promise<Outcome<T>> =>
  promise.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );

function values<T>(outcomes: readonly Outcome<T>[]): T[] {
  const failed = outcomes.find((o) => !o.ok);
  if (failed && !failed.ok) throw failed.error;
  return outcomes.map((o) => (o as { value: T }).value);
}

function readsByJob(records: readonly RequestRecord[]): Map<string, number[]> {
  const byJob = new Map<string, number[]>();
  for (const r of records) if (r.jobId) byJob.set(r.jobId, [...(byJob.get(r.jobId) ?? []), r.atMs]);
  for (const times of byJob.values()) times.sort((a, b) => a - b);
  return byJob;
}

/**
 * The cancels' reaction: the bench's clock just before the cancel was sent -> the provider's cancel request (its
 * arrival in the simulator's log), while each operation's status loop waited in the worker process.
 */
async function cancelReactionOf(
  dep: Awaited<ReturnType<typeof deploy>>,
  cancelled: readonly Cancelled[],
): Promise<ReactionResult['cancel']> {
  const cancelsByJob = readsByJob(await dep.sims.hooked!.requests('cancel'));
  const reactions = cancelled.map((c) => {
    const sentAtMs = cancelsByJob.get(c.jobId)?.find((t) => t >= c.requestedAtMs);
    if (sentAtMs === undefined) throw new Error(`reaction: no cancel request for ${c.jobId} after its cancel`);
    return sentAtMs - c.requestedAtMs;
  });
  return {
    samples: reactions.length,
    reaction: latencySummary(reactions),
    clientAnswer: latencySummary(cancelled.map((c) => c.answeredAtMs - c.requestedAtMs)),
  };
}

/** The webhook samples of posted webhooks, each with the first status read of its job after the post. */
async function webhookSamples(
  dep: Awaited<ReturnType<typeof deploy>>,
): Promise<(posted: readonly Posted[], policy: { baseDelayMs: number }) => WebhookSample[]> {
  const hookedReads = readsByJob(await dep.sims.hooked!.requests('status'));
  const createdAt = new Map((await dep.sims.hooked!.jobs()).map((j) => [j.jobId, Date.parse(j.createdAt)]));
  return (posted, policy) =>
    posted.map((h) => {
      const readAtMs = hookedReads.get(h.jobId)?.find((t) => t >= h.postedAtMs);
      if (readAtMs === undefined) throw new Error(`reaction: no status read of ${h.jobId} after its webhook`);
      const createdAtMs = createdAt.get(h.jobId) ?? Number.NaN;
      return {
        ...h,
        createdAtMs,
        readAtMs,
        reactionMs: readAtMs - h.postedAtMs,
        beforePlannedRead: readAtMs < createdAtMs + earliestReadMs(policy),
      };
    });
}

/** Measures figure 5. */
export async function measureReaction(ctx: BenchContext, log: (line: string) => void): Promise<ReactionResult> {
  const operations = ctx.quick ? 60 : 400;
  const dep = await deploy(ctx, 'react', { providers: { polled: {}, hooked: {} }, webhookReceiver: true });
  const db = new Database(path.join(dep.dataDir, 'asyncjob.db'), { readonly: true, fileMustExist: true });
  try {
    // First-use costs (connections, code paths) outside the figure.
    await Promise.all([0, 1, 2].map(() => webhookOperation(ctx, dep, db)));
    const window = startServerWindow(ctx);
    const posted: Promise<Outcome<Posted>>[] = [];
    const polled: Promise<Outcome<string>>[] = [];
    const cancels: Promise<Outcome<Cancelled>>[] = [];
    const retryWaitCancels: Promise<Outcome<Cancelled>>[] = [];
    const retryWaitPosted: Promise<Outcome<Posted>>[] = [];
    for (let i = 0; i < operations; i++) {
      const role = ROLES[i % ROLES.length]!;
      if (role === 'polled') polled.push(settle(polledOperation(dep)));
      else if (role === 'cancel') cancels.push(settle(cancelledOperation(dep, db)));
      else if (role === 'cancel-retry-wait')
        retryWaitCancels.push(settle(cancelledOperation(dep, db, RETRY_WAIT_POLICY)));
      else if (role === 'webhook-retry-wait')
        retryWaitPosted.push(settle(webhookOperation(ctx, dep, db, RETRY_WAIT_POLICY)));
      else posted.push(settle(webhookOperation(ctx, dep, db)));
      await sleepMs(START_SPACING_MS);
    }
    const hooks = values(await Promise.all(posted));
    const polledIds = values(await Promise.all(polled));
    const cancelled = values(await Promise.all(cancels));
    const retryWaitCancelled = values(await Promise.all(retryWaitCancels));
    const retryWaitHooks = values(await Promise.all(retryWaitPosted));
    // Queueing of a quarter of the 200 ms target moves the figure.
    const server = await window.stop(
      [
        ...[...hooks, ...retryWaitHooks].map((h) => h.operationId),
        ...polledIds,
        ...[...cancelled, ...retryWaitCancelled].map((c) => c.operationId),
      ],
      TARGET_P99_MS / 4,
    );
    log(`  server: ${server.evidence}`);
    const samplesOf = await webhookSamples(dep);
    const samples = samplesOf(hooks, REACTION_POLICY);
    const retryWaitSamples = samplesOf(retryWaitHooks, RETRY_WAIT_POLICY);
    const breakdowns: ReactionBreakdown[] = [];
    await runPool(samples.length, 8, async (i) => {
      const b = await breakdownOf(ctx, samples[i]!);
      if (b) breakdowns.push(b);
    });
    const polledReads = readsByJob(await dep.sims.polled!.requests('status'));
    const jobOf = db.prepare('SELECT remote_job_id FROM operation_jobs WHERE operation_id = ?').pluck();
    const finishedAt = new Map(
      (await dep.sims.polled!.jobs()).map((j) => [j.jobId, j.history.find((h) => h.state === 'succeeded')?.at]),
    );
    const pollingReactions = polledIds.map((id) => {
      const jobId = jobOf.get(id) as string;
      const finished = Date.parse(finishedAt.get(jobId) ?? '');
      const read = polledReads.get(jobId)?.find((t) => t >= finished);
      if (read === undefined || Number.isNaN(finished))
        throw new Error(`reaction: no finish or read after it for ${jobId}`);
      return read - finished;
    });
    const segment = (pick: (b: ReactionBreakdown) => number | undefined) =>
      latencySummary(breakdowns.map(pick).filter((x): x is number => x !== undefined));
    const cancelReaction = await cancelReactionOf(dep, cancelled);
    const reaction = latencySummary(samples.map((s) => s.reactionMs));
    log(
      `  webhook: ${samples.length} samples, p50 ${reaction.p50Ms} ms, p99 ${reaction.p99Ms} ms, max ${reaction.maxMs} ms`,
    );
    return {
      policy: { ...REACTION_POLICY },
      statusLoop: dep.worker.pollLoop,
      jobRunsMs: JOB_RUNS_MS,
      startSpacingMs: START_SPACING_MS,
      roles: [...ROLES],
      webhook: {
        samples: samples.length,
        reaction,
        receiverAnswer: latencySummary(samples.map((s) => s.answeredAtMs - s.postedAtMs)),
        notBeforePlannedRead: samples.filter((s) => !s.beforePlannedRead).length,
        breakdown: {
          paths: {
            activity_after_signal: breakdowns.filter((b) => b.path === 'activity_after_signal').length,
            activity_already_running: breakdowns.filter((b) => b.path === 'activity_already_running').length,
          },
          receiverToSignal: segment((b) => b.receiverToSignalMs),
          signalToWorkflowTask: segment((b) => b.signalToWorkflowTaskMs),
          workflowTask: segment((b) => b.workflowTaskMs),
          activityDispatch: segment((b) => b.activityDispatchMs),
          activityToRead: segment((b) => b.activityToReadMs),
          signalToRead: segment((b) => b.signalToReadMs),
        },
      },
      webhookInRetryWait: {
        samples: retryWaitSamples.length,
        reaction: latencySummary(retryWaitSamples.map((x) => x.reactionMs)),
        receiverAnswer: latencySummary(retryWaitSamples.map((x) => x.answeredAtMs - x.postedAtMs)),
        notBeforePlannedRead: retryWaitSamples.filter((x) => !x.beforePlannedRead).length,
      },
      polling: { samples: pollingReactions.length, reaction: latencySummary(pollingReactions) },
      cancel: cancelReaction,
      cancelInRetryWait: await cancelReactionOf(dep, retryWaitCancelled),
      server,
      samples: samples.map((s) => ({ ...s, reactionMs: round(s.reactionMs, 1) })),
    };
  } finally {
    db.close();
    await dep.stop();
  }
}
