/** The `describeProvider` activity: the facts of a registered provider (no secrets, no outside call). */
import { type ProviderFacts } from './types';
import { type ActivityContext } from './provider-call';

/** Returns the provider's facts with this worker's poll loop limits, if it loops; an unknown provider throws `ASYNCJOB_ERR_PROVIDER_UNKNOWN` (non-retryable). */
export function describeProvider(ctx: ActivityContext) {
  return async (input: { provider: string }): Promise<ProviderFacts> => {
    const facts = structuredClone(ctx.providers.get(input.provider).facts);
    return ctx.pollLoop === undefined ? facts : { ...facts, pollLoop: { ...ctx.pollLoop } };
  };
}
