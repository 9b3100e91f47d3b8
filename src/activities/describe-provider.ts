/** The `describeProvider` activity: the facts of a registered provider (no secrets, no outside call). */
import { type ProviderFacts } from './types';
import { type ActivityContext } from './provider-call';

/** Returns the provider's facts; an unknown provider throws `ASYNCJOB_ERR_PROVIDER_UNKNOWN` (non-retryable). */
export function describeProvider(ctx: ActivityContext) {
  return async (input: { provider: string }): Promise<ProviderFacts> =>
    structuredClone(ctx.providers.get(input.provider).facts);
}
