/** What a workflow's history says about its cost: events, encoded bytes, timers started. */
import { temporal as proto } from '@temporalio/proto';
import type { BenchContext } from '../../lib/context';

/** What a workflow's history says about its cost. */
export interface HistoryCost {
  events: number;
  bytes: number;
  timers: number;
}

/** Reads workflow `workflowId`'s history (in `namespace`, the server's when absent) and measures it. */
export async function historyCost(ctx: BenchContext, workflowId: string, namespace?: string): Promise<HistoryCost> {
  const client = namespace === undefined ? ctx.temporal : ctx.clientIn(namespace);
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  return {
    events: events.length,
    bytes: proto.api.history.v1.History.encode(history).finish().length,
    timers: events.filter((e) => e.eventType === proto.api.enums.v1.EventType.EVENT_TYPE_TIMER_STARTED).length,
  };
}

/** Up to `n` IDs spread over `ids` (first, last and between). */
export function sampleOf(ids: readonly string[], n: number): string[] {
  if (ids.length <= n) return [...ids];
  return Array.from({ length: n }, (_, i) => ids[Math.round((i * (ids.length - 1)) / (n - 1))]!);
}
