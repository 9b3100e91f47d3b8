/**
 * P1: a provider's state table as data. The adapter declares which of the provider's own words mean
 * pending, success, failure, cancelled or expired; anything else is `unknown` (stop and escalate).
 *
 * Case handling: matching is exact by default, because providers differ (`Running` and `running` may be
 * different states in a badly designed API). A table may set `caseInsensitive: true`; then both the table's
 * words and the raw state are compared after `trim()` and `toLowerCase()` (locale-independent). Whitespace is
 * never trimmed in exact mode.
 */
import { z } from 'zod';
import { type RemoteStateCategory } from './observation';
import { lazySchema } from './lazy-schema';

const stateWords = z.array(z.string().min(1).max(200)).max(100).default([]);

/** A provider state table. A word may appear in one category only. */
export const providerStateTableSchema = lazySchema(() =>
  z
    .object({
      pending: stateWords,
      success: stateWords,
      failure: stateWords,
      cancelled: stateWords,
      expired: stateWords,
      caseInsensitive: z.boolean().default(false),
    })
    .strict()
    .superRefine((table, ctx) => {
      const seen = new Map<string, string>();
      for (const category of ['pending', 'success', 'failure', 'cancelled', 'expired'] as const) {
        for (const word of table[category]) {
          const key = table.caseInsensitive ? word.trim().toLowerCase() : word;
          const other = seen.get(key);
          if (other !== undefined) {
            ctx.addIssue({
              code: 'custom',
              path: [category],
              message: `state "${word}" is also listed under ${other}`,
            });
          }
          seen.set(key, category);
        }
      }
    }),
);
/** A validated provider state table. */
export type ProviderStateTable = z.infer<typeof providerStateTableSchema>;

/** Maps a provider's raw state to its P1 category; `undefined`, empty or anything not in the table is `unknown`. */
export function categorize(table: ProviderStateTable, rawState: string | undefined): RemoteStateCategory {
  if (rawState === undefined || rawState === '') return 'unknown';
  const norm = (s: string): string => (table.caseInsensitive ? s.trim().toLowerCase() : s);
  const raw = norm(rawState);
  for (const category of ['pending', 'success', 'failure', 'cancelled', 'expired'] as const) {
    if (table[category].some((word) => norm(word) === raw)) return category;
  }
  return 'unknown';
}
