/** The target that figure 5 measures, `met` computed from the figure and its condition. */
import type { Target } from '../../lib/targets';
import type { ReactionResult } from './result';

/** The target: webhook reaction p99, with the server not saturated. */
export const TARGET_P99_MS = 200;

/** The target: a cancel reaches the provider within this at p99 while the status loop waits. */
const CANCEL_TARGET_P99_MS = 250;

/**
 * The webhook reaction target. A saturated server can only lengthen reactions, so a p99 within the target is met
 * whatever the load (the name and `conditions` say which it was); a p99 over it measured on a saturated server
 * says nothing about a quiet one, and is named so.
 */
export function reactionTargets(r: ReactionResult | undefined): Target[] {
  if (!r) return [];
  const measured = r.webhook.reaction.p99Ms;
  return [
    {
      name: `webhook reaction p99, ${r.webhook.samples} samples (signed webhook at the receiver -> confirming status read sent), server ${r.server.saturated ? 'SATURATED' : 'not saturated'}`,
      target: `<= ${TARGET_P99_MS}`,
      measured,
      unit: 'ms',
      met: measured <= TARGET_P99_MS,
      conditions: r.server.evidence,
    },
    ...(r.webhookInRetryWait === undefined
      ? []
      : [
          {
            name: `webhook reaction p99 while the status activity waits for its next attempt (the signal path), ${r.webhookInRetryWait.samples} samples (signed webhook at the receiver -> confirming status read sent), server ${r.server.saturated ? 'SATURATED' : 'not saturated'}`,
            target: `<= ${TARGET_P99_MS}`,
            measured: r.webhookInRetryWait.reaction.p99Ms,
            unit: 'ms',
            met: r.webhookInRetryWait.reaction.p99Ms <= TARGET_P99_MS,
            conditions: r.server.evidence,
          },
        ]),
    ...(r.cancel === undefined
      ? []
      : [
          {
            name: `cancel reaction p99 while the status loop waits, ${r.cancel.samples} samples (the client's cancel sent -> the provider's cancel request), server ${r.server.saturated ? 'SATURATED' : 'not saturated'}`,
            target: `<= ${CANCEL_TARGET_P99_MS}`,
            measured: r.cancel.reaction.p99Ms,
            unit: 'ms',
            met: r.cancel.reaction.p99Ms <= CANCEL_TARGET_P99_MS,
            conditions: r.server.evidence,
          },
        ]),
    ...(r.cancelInRetryWait === undefined
      ? []
      : [
          {
            name: `cancel reaction p99 while the status activity waits for its next attempt (a retry-driven wait), ${r.cancelInRetryWait.samples} samples (the client's cancel sent -> the provider's cancel request), server ${r.server.saturated ? 'SATURATED' : 'not saturated'}`,
            target: `<= ${CANCEL_TARGET_P99_MS}`,
            measured: r.cancelInRetryWait.reaction.p99Ms,
            unit: 'ms',
            met: r.cancelInRetryWait.reaction.p99Ms <= CANCEL_TARGET_P99_MS,
            conditions: r.server.evidence,
          },
        ]),
  ];
}
