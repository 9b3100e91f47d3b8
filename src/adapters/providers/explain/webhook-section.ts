/** The Webhook section: where the provider's callbacks arrive and how they are checked. Pure. */
import { type ProviderContract } from '../contract';
import { type ExplainSection } from './explanation';
import { code } from './phrases';

/** The webhook route, signature, event and job fields; a webhook only shortens the wait (W1). */
export function webhookSection(contract: ProviderContract): ExplainSection {
  const webhook = contract.webhook;
  if (webhook === undefined)
    return { id: 'webhook', title: 'Webhook', lines: ['none: the job is followed by polling alone'] };
  const secret =
    webhook.secret.secretEnv !== undefined
      ? `environment variable ${webhook.secret.secretEnv}`
      : `the file ${webhook.secret.secretFile}`;
  return {
    id: 'webhook',
    title: 'Webhook',
    lines: [
      `POST /webhooks/${contract.name} at the webhook receiver; signature in header ${webhook.signatureHeader} (${webhook.scheme}, secret from ${secret}, at most ${webhook.toleranceMs / 1000} s old) (W1)`,
      `event ID in ${code(webhook.eventIdField)} (duplicates dropped), job ID in ${code(webhook.jobIdField)}, state in ${code(webhook.stateField)}`,
      'a webhook shortens the wait for the next status read; it never replaces it',
    ],
  };
}
