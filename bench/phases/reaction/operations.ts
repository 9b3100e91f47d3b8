/**
 * The operations of figure 5: one that is told by webhook that its job finished (the bench signs and posts the
 * event to the receiver in the worker process once the job has finished, its clock read just before posting),
 * and one that is not (the baseline: it learns it at its next planned read).
 */
import type Database from 'better-sqlite3';
import { request } from 'undici';
import { signWebhook } from '../../../src/simulator';
import type { BenchContext, Deployment } from '../../lib/context';
import { nowMs, sleepMs, withTimeout } from '../../lib/stats';

/** The policy of figure 5: a planned wait of 10-20 s, long beside any reaction, so an early read is the webhook's. */
export const REACTION_POLICY = { baseDelayMs: 20_000, maxDelayMs: 20_000 } as const;

/**
 * The policy of the cancels made during a retry-driven wait: the first read 30-60 s away, past the status loop's
 * 30 s, so the workflow hands the wait to retries of its status activity, which waits for its next attempt.
 */
export const RETRY_WAIT_POLICY = { baseDelayMs: 60_000, maxDelayMs: 60_000 } as const;

/** The `finishes` script's job runs this long (bench/lib/context.ts). */
export const JOB_RUNS_MS = 1_500;

/** A posted webhook, as the bench saw it. */
export interface Posted {
  operationId: string;
  jobId: string;
  postedAtMs: number;
  answeredAtMs: number;
}

async function jobIdOf(db: Database.Database, operationId: string): Promise<string> {
  const find = db.prepare('SELECT remote_job_id FROM operation_jobs WHERE operation_id = ?').pluck();
  const deadline = nowMs() + 120_000;
  for (;;) {
    const jobId = find.get(operationId) as string | undefined;
    if (jobId !== undefined) return jobId;
    if (nowMs() > deadline) throw new Error(`reaction: ${operationId} has no provider job after 2 minutes`);
    await sleepMs(20);
  }
}

async function succeeded(handle: { operationId: string; result(): Promise<{ localState: string }> }): Promise<void> {
  const summary = await withTimeout(handle.result(), 300_000, `reaction operation ${handle.operationId}`);
  if (summary.localState !== 'succeeded')
    throw new Error(`reaction: ${handle.operationId} ended ${summary.localState}`);
}

/**
 * Starts an operation on provider `hooked`, posts its job's webhook once the job has finished, waits for success.
 * Under `REACTION_POLICY` the webhook finds the status loop waiting in the worker process (the in-process wake); under
 * `RETRY_WAIT_POLICY` it finds the status activity waiting for its next attempt (the signal path: the workflow has the
 * attempt cancelled and reads itself).
 */
export async function webhookOperation(
  ctx: BenchContext,
  dep: Deployment,
  db: Database.Database,
  policy: { baseDelayMs: number; maxDelayMs: number } = REACTION_POLICY,
): Promise<Posted> {
  const handle = await dep.client.start(dep.request('hooked', 'finishes', policy));
  const jobId = await jobIdOf(db, handle.operationId);
  // The job was created before its link was stored, so it has finished JOB_RUNS_MS after now at the latest.
  await sleepMs(JOB_RUNS_MS + 200);
  const raw = JSON.stringify({
    event_id: `evt_bench_${handle.operationId}`,
    job_id: jobId,
    state: 'succeeded',
    occurred_at: new Date().toISOString(),
  });
  const url = `${dep.worker.webhookUrl!}/webhooks/${dep.provider('hooked')}`;
  const postedAtMs = Date.now();
  const res = await request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-signature': signWebhook(ctx.webhookSecret, raw, Math.floor(postedAtMs / 1000)),
    },
    body: raw,
  });
  const body = (await res.body.json()) as { status?: string; signalled?: boolean };
  const answeredAtMs = Date.now();
  if (res.statusCode !== 200 || body.status !== 'recorded' || body.signalled !== true)
    throw new Error(`reaction: the receiver answered ${res.statusCode} ${JSON.stringify(body)} for ${jobId}`);
  await succeeded(handle);
  return { operationId: handle.operationId, jobId, postedAtMs, answeredAtMs };
}

/** Starts an operation on provider `polled` (no webhook) and waits for its success; returns its ID. */
export async function polledOperation(dep: Deployment): Promise<string> {
  const handle = await dep.client.start(dep.request('polled', 'finishes', REACTION_POLICY));
  await succeeded(handle);
  return handle.operationId;
}

/** A cancel requested by the bench while the operation's status loop waits, as the bench saw it. */
export interface Cancelled {
  operationId: string;
  jobId: string;
  /** The bench's clock just before it sent the cancel (the client's update), and when the update was answered. */
  requestedAtMs: number;
  answeredAtMs: number;
}

/**
 * Starts an operation on provider `hooked` whose job runs until cancelled (the simulator's cancel ends it at once),
 * and cancels it while it waits for its first read: in the status loop (`REACTION_POLICY`, 10-20 s away), or as a
 * retry-driven wait (`RETRY_WAIT_POLICY`); waits until it has ended `cancelled`.
 */
export async function cancelledOperation(
  dep: Deployment,
  db: Database.Database,
  policy: { baseDelayMs: number; maxDelayMs: number } = REACTION_POLICY,
): Promise<Cancelled> {
  const handle = await dep.client.start(dep.request('hooked', 'forever', { ...policy, cancelDeadlineMs: 120_000 }));
  const jobId = await jobIdOf(db, handle.operationId);
  // The create's answer is recorded and the workflow has handed the wait over well within this.
  await sleepMs(JOB_RUNS_MS + 200);
  const requestedAtMs = Date.now();
  const answer = await dep.client.cancel(handle.operationId, {
    requestedBy: 'bench@example.com',
    reason: 'figure 5: cancel reaction',
    expectedEffect: 'the job stops',
  });
  const answeredAtMs = Date.now();
  if (!answer.accepted) throw new Error(`reaction: the cancel of ${handle.operationId} was refused`);
  const summary = await withTimeout(handle.result(), 300_000, `reaction operation ${handle.operationId}`);
  if (summary.localState !== 'cancelled')
    throw new Error(`reaction: ${handle.operationId} ended ${summary.localState} after its cancel`);
  return { operationId: handle.operationId, jobId, requestedAtMs, answeredAtMs };
}
