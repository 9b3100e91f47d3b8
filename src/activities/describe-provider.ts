/** The `describeProvider` activity: the facts of a registered provider (no secrets, no outside call). */
import type { VariableDeclarations } from '../core/operation-variables';
import type { ProviderAdapter } from '../adapters/providers/adapter';
import { type ProviderFacts } from './types';
import { type ActivityContext } from './provider-call';

/** The operation variables the adapter's contract declares (C5), or undefined when it declares none. */
function declaredVariables(adapter: ProviderAdapter): VariableDeclarations | undefined {
  const declared = adapter.contract?.variables;
  return declared !== undefined && Object.keys(declared).length > 0 ? declared : undefined;
}

/**
 * Returns the provider's facts with the operation variables its adapter declares, this worker's poll loop
 * limits, if it loops, and its decider policy, if it has one (D2); an unknown provider throws `ASYNCJOB_ERR_PROVIDER_UNKNOWN` (non-retryable).
 */
export function describeProvider(ctx: ActivityContext) {
  return async (input: { provider: string }): Promise<ProviderFacts> => {
    const provider = ctx.providers.get(input.provider);
    const facts = structuredClone(provider.facts);
    const variables = declaredVariables(provider.adapter);
    return {
      ...facts,
      ...(variables !== undefined ? { variables: structuredClone(variables) } : {}),
      ...(ctx.pollLoop !== undefined ? { pollLoop: { ...ctx.pollLoop } } : {}),
      ...(ctx.deciders !== undefined ? { deciders: structuredClone(ctx.deciders) } : {}),
    };
  };
}
