/** The Timing and budgets section: the poll policy in effect at this provider. Pure. */
import { pollPolicySchema, type PollPolicy } from '../../../core/policy';
import { type ProviderContract } from '../contract';
import { type ExplainSection } from './explanation';

/** The effective poll policy beside its defaults: backoff, status request budget, not-found window (B1, H3). */
export function policySection(contract: ProviderContract): ExplainSection {
  const defaults = pollPolicySchema.parse({});
  // The top-level notFoundWindowMs is the provider's default for the window (adapter.ts, providerPolicyOf).
  const overrides = {
    ...(contract.notFoundWindowMs !== undefined ? { notFoundWindowMs: contract.notFoundWindowMs } : {}),
    ...contract.policy,
  };
  const effective: PollPolicy = pollPolicySchema.parse(overrides);
  const lines: string[] = [];
  const keys = Object.keys(overrides) as (keyof PollPolicy)[];
  lines.push(
    keys.length === 0
      ? 'poll policy: the defaults (a start request may override them)'
      : `poll policy: ${keys.map((k) => `${k} ${String(effective[k])} (default ${String(defaults[k])})`).join(', ')}; a start request may override them`,
  );
  lines.push(
    `backoff from ${effective.baseDelayMs} ms to ${effective.maxDelayMs} ms (${effective.jitter} jitter), at most ${effective.maxStatusRequests} status requests (B1)`,
  );
  lines.push(`a 404 within ${effective.notFoundWindowMs} ms of acceptance means "not visible yet" (H3)`);
  return { id: 'policy', title: 'Timing and budgets', lines };
}
