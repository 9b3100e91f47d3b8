/**
 * Whether a worker serves a provider, asked before an operation is started: a worker that serves provider P
 * polls P's activity task queue (`<task queue>-provider-P`), and Temporal's DescribeTaskQueue lists the pollers it
 * saw in the last few minutes. No poller means an operation for P would fail at once (unknown provider) or wait
 * for a worker that may never come, so the client refuses it unless told to start anyway.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { providerKey } from '../workflows/search-attributes';
import { type ClientContext, providerTaskQueue, WORKFLOW_TYPE } from './context';
import { ProviderUnservedError } from './errors';

/** `TASK_QUEUE_KIND_NORMAL` and `TASK_QUEUE_TYPE_ACTIVITY` of temporal.api.enums.v1. */
const NORMAL_KIND = 1;
const ACTIVITY_TYPE = 2;

/** How long a provider with no poller is asked again (a worker that has just started polls within this). */
const GRACE_MS = 1_000;
const RETRY_MS = 200;
/** Recent operations looked at, and providers checked, to name the providers that are served. */
const RECENT_OPERATIONS = 200;
const MAX_CANDIDATES = 20;

/** How many workers polled the provider's activity task queue recently; null when the server would not say. */
async function pollerCount(ctx: ClientContext, provider: string): Promise<number | null> {
  try {
    const answer = await ctx.client.withDeadline(Date.now() + 5_000, () =>
      ctx.client.workflowService.describeTaskQueue({
        namespace: ctx.namespace,
        taskQueue: { name: providerTaskQueue(ctx.taskQueue, provider), kind: NORMAL_KIND },
        taskQueueType: ACTIVITY_TYPE,
      }),
    );
    return answer.pollers?.length ?? 0;
  } catch {
    return null;
  }
}

/**
 * The providers a worker serves now, as far as the client can see: those of recent operations whose task queue
 * has pollers (Temporal has no list of task queues). Best effort: empty when visibility cannot answer.
 */
async function servedProviders(ctx: ClientContext, except: string): Promise<string[]> {
  const candidates = new Set<string>();
  try {
    let seen = 0;
    for await (const info of ctx.client.workflow.list({ query: `WorkflowType = "${WORKFLOW_TYPE}"`, pageSize: 100 })) {
      const provider = info.typedSearchAttributes.get(providerKey);
      if (provider !== undefined && provider !== except) candidates.add(provider);
      if (++seen >= RECENT_OPERATIONS || candidates.size >= MAX_CANDIDATES) break;
    }
  } catch {
    return [];
  }
  const counts = await Promise.all([...candidates].map(async (p) => [p, await pollerCount(ctx, p)] as const));
  return counts
    .filter(([, n]) => n !== null && n > 0)
    .map(([p]) => p)
    .sort();
}

/**
 * How long a provider found served is taken as served without asking the server again. The server's answer
 * already spans the pollers of its last few minutes (5 by default), so a client starting many operations asks
 * once per provider in this time rather than once per start; an unserved provider is asked every time.
 */
const SERVED_FRESH_MS = 10_000;

/** Per Temporal client, per namespace and provider task queue: until when it was last found served. */
const servedUntil = new WeakMap<Client, Map<string, number>>();

/** Whether a worker polled the provider's activity task queue recently (or the server would not say). */
export async function providerServedNow(ctx: ClientContext, provider: string): Promise<boolean> {
  const key = `${ctx.namespace}\u0000${providerTaskQueue(ctx.taskQueue, provider)}`;
  let seen = servedUntil.get(ctx.client);
  if ((seen?.get(key) ?? 0) > Date.now()) return true;
  const count = await pollerCount(ctx, provider);
  if (count === null) return true;
  if (count === 0) return false;
  if (seen === undefined) servedUntil.set(ctx.client, (seen = new Map()));
  seen.set(key, Date.now() + SERVED_FRESH_MS);
  return true;
}

/**
 * Throws {@link ProviderUnservedError} (naming the providers that are served) when no worker polled the
 * provider's task queue recently. When the server will not say (an older server, a permission), the start goes on.
 */
export async function assertProviderServed(
  ctx: ClientContext,
  provider: string,
  graceMs: number = GRACE_MS,
): Promise<void> {
  const until = Date.now() + graceMs;
  for (;;) {
    if (await providerServedNow(ctx, provider)) return;
    if (Date.now() >= until) break;
    await sleep(RETRY_MS);
  }
  throw new ProviderUnservedError(
    provider,
    providerTaskQueue(ctx.taskQueue, provider),
    await servedProviders(ctx, provider),
  );
}

/**
 * Waits until a worker polls each provider's task queue (a worker that has just started reaches the server within
 * moments, longer on a loaded machine), or throws {@link ProviderUnservedError} for the first one still unserved
 * after `timeoutMs`. For deploy scripts and test harnesses that start workers and then operations.
 */
export async function waitForProviderWorkers(
  ctx: ClientContext,
  providers: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (const provider of providers) await assertProviderServed(ctx, provider, Math.max(0, until - Date.now()));
}
