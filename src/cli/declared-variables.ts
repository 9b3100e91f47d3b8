/**
 * The operation variables a provider's adapter declares, read from its document when this process can see it: the
 * same `ASYNCJOB_PROVIDERS` (and `ASYNCJOB_PROVIDERS_PATH`) a worker serves. `asyncjob start` and `asyncjob mcp`
 * check a start's variables against them before anything is started (C5); when the document is not listed here or
 * does not load, the workflow checks them instead.
 */
import path from 'node:path';
import { loadProviderContract } from '../adapters/providers';
import { fileNameOf } from '../adapters/providers/registry';
import type { VariableDeclarations } from '../core/operation-variables';

type Env = Readonly<Record<string, string | undefined>>;

/** The document is read for its variables only: its base URL (and any `${VAR}` in it) does not matter here. */
const ANY_BASE_URL = 'https://unset.invalid';

/**
 * The declarations of `provider` (`{}` when its document declares none), or undefined when no document in
 * `ASYNCJOB_PROVIDERS` is that provider's or it does not load. Reads files only; safe to repeat.
 */
export async function declaredVariablesOf(env: Env, provider: string): Promise<VariableDeclarations | undefined> {
  const reference = (env.ASYNCJOB_PROVIDERS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .find((entry) => entry !== '' && fileNameOf(entry) === provider);
  if (reference === undefined) return undefined;
  try {
    const contract = await loadProviderContract(reference, {
      searchDirs: (env.ASYNCJOB_PROVIDERS_PATH ?? '').split(path.delimiter).filter(Boolean),
      baseUrl: ANY_BASE_URL,
      env,
    });
    if (contract.name !== provider) return undefined;
    return contract.variables ?? {};
  } catch {
    return undefined;
  }
}
