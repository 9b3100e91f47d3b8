/**
 * Our Prometheus metrics, derived from what was recorded (so a metric can never say something the journal does
 * not): provider requests by action, outcome and delay source, and escalations by reason. Exported through the
 * Temporal runtime's Prometheus endpoint (`ASYNCJOB_METRICS_ADDRESS`) beside the SDK's own metrics.
 */
import { Context } from '@temporalio/activity';
import type { StepEntry } from '../core/step';

/** Counts the observations and escalations among freshly appended entries. Never throws. */
export function recordMetrics(provider: string, entries: readonly StepEntry[]): void {
  let meter;
  try {
    meter = Context.current().metricMeter;
  } catch {
    return; // Outside an activity (tests of pure helpers): nothing to export to.
  }
  const requests = meter.createCounter(
    'asyncjob_provider_requests',
    '1',
    'provider calls by action, outcome, HTTP status class and the delay source chosen next',
  );
  const escalations = meter.createCounter('asyncjob_escalations', '1', 'escalations raised, by reason');
  for (const { body } of entries) {
    if (body.kind === 'observation' && body.action !== 'webhook') {
      requests.add(1, {
        provider,
        action: body.action,
        outcome: body.transport,
        status_class: body.httpStatus !== undefined ? `${Math.floor(body.httpStatus / 100)}xx` : 'none',
        delay_source: body.delaySource ?? 'none',
      });
    } else if (body.kind === 'escalation') {
      escalations.add(1, { provider, reason: body.reason });
    }
  }
}
