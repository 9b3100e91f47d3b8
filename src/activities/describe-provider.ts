/**
 * The `describeProvider` activity: the facts of a registered provider (no secrets, no outside call), and, given the
 * operation's start, its intent recorded in the same local activity (`recordStartIntent`), so an operation begins
 * with one marker event and one round trip between the workflow and the worker.
 */
import { z } from 'zod';
import { AsyncJobError } from '../core/errors';
import { issueText } from '../core/issues';
import type { OperationStart } from '../core/operation';
import type { VariableDeclarations } from '../core/operation-variables';
import type { ProviderAdapter } from '../adapters/providers/adapter';
import { type ProviderFacts, type RecordedStart } from './types';
import { type ActivityContext } from './provider-call';
import { recordStartIntent } from './record-intent';

/**
 * The start's own fields and its request's provider, checked where the start enters the worker;
 * `startRecord` checks the request in full.
 */
const startShapeSchema = z.object({
  request: z.object({ provider: z.string() }),
  startedAtMs: z.number().int().nonnegative(),
  idempotencyToken: z.string(),
  traceId: z.string(),
});

/** The operation variables the adapter's contract declares (C5), or undefined when it declares none. */
function declaredVariables(adapter: ProviderAdapter): VariableDeclarations | undefined {
  const declared = adapter.contract?.variables;
  return declared !== undefined && Object.keys(declared).length > 0 ? declared : undefined;
}

/**
 * Returns the provider's facts with the operation variables its adapter declares, this worker's poll loop
 * limits, if it loops, and its decider policy, if it has one (D2); an unknown provider throws `ASYNCJOB_ERR_PROVIDER_UNKNOWN` (non-retryable).
 * Given `start`, it records the start's intent with those facts (`recorded`); a retry after the intent was written
 * joins it, as `recordIntent` does.
 */
export function describeProvider(ctx: ActivityContext) {
  const recordStart = recordStartIntent(ctx);
  return async (input: {
    provider: string;
    start?: OperationStart;
  }): Promise<ProviderFacts & { recorded?: RecordedStart }> => {
    const provider = ctx.providers.get(input.provider);
    const variables = declaredVariables(provider.adapter);
    const facts: ProviderFacts = {
      ...structuredClone(provider.facts),
      ...(variables !== undefined ? { variables: structuredClone(variables) } : {}),
      ...(ctx.pollLoop !== undefined ? { pollLoop: { ...ctx.pollLoop } } : {}),
      ...(ctx.deciders !== undefined ? { deciders: structuredClone(ctx.deciders) } : {}),
    };
    if (input.start === undefined) return facts;
    const start = startShapeSchema.safeParse(input.start);
    if (!start.success)
      throw new AsyncJobError('ASYNCJOB_ERR_INVALID_INPUT', `start: ${issueText(start.error.issues)}`);
    if (start.data.request.provider !== input.provider)
      throw new AsyncJobError('ASYNCJOB_ERR_INVALID_INPUT', `start.request.provider: expected ${input.provider}`);
    return { ...facts, recorded: await recordStart(input.start, facts) };
  };
}
