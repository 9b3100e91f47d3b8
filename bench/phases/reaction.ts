/**
 * Figure 5: reaction, from the provider job finishing (the simulator's own state-change time) to the operation's
 * success (the workflow's close time: status read, result download and check, journal, done). By polling (no
 * webhooks: bounded by the poll interval the policy reached) and by webhook (the simulator POSTs a signed event to
 * `startWebhookReceiver`, which records it and signals the workflow via `AsyncJobClient.signalWebhook`).
 */
import path from 'node:path';
import type { OperationStore } from '../../src/adapters/store/operation-store';
import { openSqliteStore } from '../../src/adapters/store/sqlite-store';
import type { AsyncJobClient } from '../../src/client';
import { startWebhookReceiver, type WebhookOutcome, type WebhookSettings } from '../../src/webhooks/receiver';
import { deploy, type BenchContext, type Deployment } from '../lib/context';
import { percentile, round, sleepMs, withTimeout } from '../lib/stats';

/** Polls back off from 2 s to 8 s; the job runs 1.5 to 3.5 s. */
export const REACTION_POLICY = { baseDelayMs: 2_000, maxDelayMs: 8_000 } as const;

/** The rest preset's webhook contract (simulator events: `event_id`, `job_id`, `state`). */
const SETTINGS: WebhookSettings = {
  signatureHeader: 'X-Signature',
  scheme: 'hmac-sha256-timestamped',
  secret: { secretEnv: 'ASYNCJOB_SIMULATOR_WEBHOOK_SECRET' },
  toleranceMs: 300_000,
  eventIdField: 'event_id',
  jobIdField: 'job_id',
  stateField: 'state',
};

/** Reaction figures of one mode, ms. */
export interface ReactionMode {
  operations: number;
  /** One start every this many ms. */
  startSpacingMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  statusReadsPerOperation: number;
}

/** Figure 5. */
export interface ReactionResult {
  policy: typeof REACTION_POLICY;
  polling: ReactionMode;
  webhook: ReactionMode & { webhooksRecorded: number; webhooksSignalled: number };
}

/**
 * Starts are spaced (one every `spacingMs`) so jobs finish one by one, as they would in steady state: started all
 * at once they finish in one burst and the figure becomes the dev server's backlog, not the reaction.
 */
async function run(
  ctx: BenchContext,
  dep: Deployment,
  provider: string,
  operations: number,
  spacingMs: number,
): Promise<ReactionMode> {
  const handles = [];
  for (let i = 0; i < operations; i++) {
    handles.push(await dep.client.start(dep.request(provider, 'timed', REACTION_POLICY)));
    await sleepMs(spacingMs);
  }
  const summaries = await withTimeout(
    Promise.all(handles.map((h) => h.result())),
    300_000,
    `reaction run on ${provider}`,
  );
  const jobs = new Map((await dep.sims[provider]!.jobs()).map((j) => [j.jobId, j]));
  const reactions: number[] = [];
  let reads = 0;
  for (const summary of summaries) {
    if (summary.localState !== 'succeeded' || summary.jobId === undefined)
      throw new Error(`reaction: ${summary.operationId} ended ${summary.localState}`);
    const finished = jobs.get(summary.jobId)?.history.find((h) => h.state === 'succeeded');
    if (!finished) throw new Error(`reaction: the simulator has no finish time for ${summary.jobId}`);
    const closed = (await ctx.temporal.workflow.getHandle(summary.operationId).describe()).closeTime;
    if (!closed) throw new Error(`reaction: ${summary.operationId} has no close time`);
    reactions.push(closed.getTime() - Date.parse(finished.at));
    reads += summary.statusRequestsUsed;
  }
  return {
    operations,
    startSpacingMs: spacingMs,
    p50Ms: round(percentile(reactions, 50), 0),
    p99Ms: round(percentile(reactions, 99), 0),
    maxMs: round(Math.max(...reactions), 0),
    statusReadsPerOperation: round(reads / operations, 2),
  };
}

/** Measures figure 5. */
export async function measureReaction(ctx: BenchContext, log: (line: string) => void): Promise<ReactionResult> {
  // The receiver must exist before the simulator that calls it; the store and client are bound once deployed.
  let store: OperationStore | undefined;
  let client: AsyncJobClient | undefined;
  const outcomes: WebhookOutcome[] = [];
  let hooked = '';
  const receiver = await startWebhookReceiver({
    store: {
      findByProviderJobId: (p, j) => store!.findByProviderJobId(p, j),
      recordWebhookEvent: (e) => store!.recordWebhookEvent(e),
    },
    webhookSettings: (name) => (name === hooked ? SETTINGS : undefined),
    signal: (operationId, hint) => client!.signalWebhook(operationId, hint),
    env: { ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: ctx.webhookSecret },
    onOutcome: (o) => void outcomes.push(o),
  });
  let dep: Deployment | undefined;
  try {
    dep = await deploy(ctx, 'react', {
      providers: { polled: {}, hooked: { webhookUrl: (name) => `${receiver.url}/webhooks/${name}` } },
    });
    hooked = dep.provider('hooked');
    client = dep.client;
    store = await openSqliteStore({ path: path.join(dep.dataDir, 'asyncjob.db') });
    const operations = ctx.quick ? 12 : 60;
    const spacingMs = 300;
    const polling = await run(ctx, dep, 'polled', operations, spacingMs);
    log(`  polling: p50 ${polling.p50Ms} ms, p99 ${polling.p99Ms} ms`);
    const webhook = await run(ctx, dep, 'hooked', operations, spacingMs);
    log(`  webhook: p50 ${webhook.p50Ms} ms, p99 ${webhook.p99Ms} ms`);
    return {
      policy: REACTION_POLICY,
      polling,
      webhook: {
        ...webhook,
        webhooksRecorded: outcomes.filter((o) => o.result === 'recorded').length,
        webhooksSignalled: outcomes.filter((o) => o.signalled === true).length,
      },
    };
  } finally {
    await receiver.stop();
    await store?.close();
    await dep?.stop();
  }
}
