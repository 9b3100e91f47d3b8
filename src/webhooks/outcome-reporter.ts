/**
 * Logs and counts what the webhook receiver did with each request: a JSON line through the worker's logger
 * (`webhook refused` at warn with its reason, `webhook failed` at error, `webhook received` at info) and the
 * Prometheus counter `asyncjob_webhook_requests{provider, result, reason, status}` through the Temporal runtime's
 * metric meter, i.e. on the worker's own metrics endpoint (ASYNCJOB_METRICS_ADDRESS) beside
 * `asyncjob_provider_requests`. Never the body, never the signature header: only the outcome's fields.
 */
import type { Logger, MetricMeter } from '@temporalio/common';
import type { WebhookOutcome } from './receiver';

/** Options of {@link webhookOutcomeReporter}. */
export interface WebhookOutcomeReporterOptions {
  /** The worker's logger (`createJsonLogger`), at the levels the reporter writes; no log lines when absent. */
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** The runtime's meter (`Runtime.instance().metricMeter`); no metrics when absent. */
  meter?: MetricMeter;
  /**
   * Whether a provider name is one this receiver serves. Others are counted as `provider="unknown"`, so a caller
   * cannot create metric series by inventing names in the URL.
   */
  isKnownProvider?: (name: string) => boolean;
}

/** The counter's name. */
export const WEBHOOK_REQUESTS_METRIC = 'asyncjob_webhook_requests';

/** Builds the receiver's `onOutcome`: one log line and one count per request. Never throws. */
export function webhookOutcomeReporter(options: WebhookOutcomeReporterOptions): (outcome: WebhookOutcome) => void {
  const counter = options.meter?.createCounter(
    WEBHOOK_REQUESTS_METRIC,
    '1',
    'webhook requests by provider, result (recorded, duplicate, unknown_job, refused, error), refusal reason and HTTP status answered',
  );
  return (outcome) => {
    try {
      const fields: Record<string, unknown> = {
        provider: outcome.provider,
        status: outcome.status,
        result: outcome.result,
        ...(outcome.reason !== undefined ? { reason: outcome.reason } : {}),
        ...(outcome.eventId !== undefined ? { eventId: outcome.eventId } : {}),
        ...(outcome.operationId !== undefined ? { operationId: outcome.operationId } : {}),
        ...(outcome.signalled !== undefined ? { signalled: outcome.signalled } : {}),
      };
      if (outcome.result === 'refused') options.logger?.warn('webhook refused', fields);
      else if (outcome.result === 'error') options.logger?.error('webhook failed', fields);
      else options.logger?.info('webhook received', fields);
      const known = outcome.provider !== '' && (options.isKnownProvider?.(outcome.provider) ?? true);
      counter?.add(1, {
        provider: known ? outcome.provider : 'unknown',
        result: outcome.result,
        reason: outcome.reason ?? 'none',
        status: String(outcome.status),
      });
    } catch {
      // Reporting never changes the answer to the provider.
    }
  };
}
