/**
 * The provider registry of a worker: for each provider name, its adapter, one pooled HTTP client bound to the
 * adapter's origin (its credential's authoriser, secrets read by reference at the moment of each request, T4) and the facts the
 * workflow reads (no secrets). Activities look providers up here; an unknown name is a typed, stable error.
 */
import path from 'node:path';
import { createHttpClient, type HttpClient } from '../http';
import { authoriserFor, type AuthoriserOptions } from '../auth';
import { type ProviderFacts } from '../../activities/types';
import { adapterFromContract, type ProviderAdapter } from './adapter';
import { loadProviderContract } from './load';
import { ProviderContractError } from './errors';
import { AsyncJobError } from '../../core/errors';
import { DEFAULT_TASK_QUEUE, providerTaskQueue } from '../../core/task-queues';

/** The registry's refusal (`ASYNCJOB_ERR_PROVIDER_UNKNOWN`, `ASYNCJOB_ERR_PROVIDER_DUPLICATE`); `provider` names it. */
export class ProviderRegistryError extends AsyncJobError {
  constructor(
    code: 'ASYNCJOB_ERR_PROVIDER_UNKNOWN' | 'ASYNCJOB_ERR_PROVIDER_DUPLICATE',
    readonly provider: string,
    message: string,
  ) {
    super(code, message);
  }
}

/** One registered provider. */
export interface RegisteredProvider {
  readonly adapter: ProviderAdapter;
  /** The provider's pooled client; only the adapter's origin is reachable and receives the credential. */
  readonly http: HttpClient;
  /** What the workflow needs to know (no secrets). */
  readonly facts: ProviderFacts;
  /**
   * The provider's own activity queue, `<task queue>-provider-<name>`: every worker of the deployment polls it (the
   * calls of a rate-limited provider, of runs started so, and the client's check that a provider is served).
   */
  readonly taskQueue: string;
}

/** Providers by name. */
export interface ProviderRegistry {
  /** The provider named `name`; throws {@link ProviderRegistryError} `ASYNCJOB_ERR_PROVIDER_UNKNOWN`. */
  get(name: string): RegisteredProvider;
  /** The registered names, sorted. */
  names(): string[];
  /** Closes every HTTP client. Safe to repeat. */
  close(): Promise<void>;
}

/** HTTP settings applied to every provider's client. */
interface ProviderHttpSettings {
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  maxBodyBytes?: number;
  maxDownloadBytes?: number;
  maxConnections?: number;
  userAgent?: string;
}

/** Options of {@link createProviderRegistry}. */
export interface CreateProviderRegistryOptions {
  /**
   * Adapters, or contracts to load (a file, or a name searched in `searchDirs`): `{ path }` serves the contract
   * under its own `name:`, which must agree with the file's name (or the name searched for); `{ name, path }`
   * serves it under `name` (an alias, e.g. one preset registered twice in tests).
   */
  providers: ReadonlyArray<ProviderAdapter | { name?: string; path: string }>;
  /** Directories searched for a contract given by name (see `loadProviderContract`). */
  searchDirs?: readonly string[];
  /** Base URLs replacing the contracts' own, by provider name (e.g. a simulator on a random port). */
  baseUrls?: Readonly<Record<string, string>>;
  /** The environment the credentials and `${VAR}` in base URLs are read from; defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** HTTP client settings for every provider. */
  http?: ProviderHttpSettings;
  /** Where AWS credentials come from for `aws-sigv4` providers; the standard AWS chain by default (tests give another). */
  awsChain?: AuthoriserOptions['awsChain'];
  /** The deployment's workflow task queue (`ASYNCJOB_TASK_QUEUE`), which scopes the provider queues; default `asyncjob`. */
  taskQueue?: string;
  /**
   * The providers whose calls run on their own queues (`'all'`, or names), as a rate limit needs: their pacer and
   * the server's dispatch limit are there. Every other provider's calls run on the deployment's workflow task queue,
   * where Temporal dispatches an activity eagerly to the worker whose workflow task scheduled it (rule F9). Default: none.
   */
  ownQueues?: 'all' | readonly string[];
}

/**
 * The facts of an adapter the workflow reads: its calls on its own queue `ownQueue` when given, else on the
 * workflow's task queue (F9). Pure.
 */
function providerFacts(adapter: ProviderAdapter, ownQueue: string | undefined): ProviderFacts {
  return {
    name: adapter.name,
    capabilities: {
      cancel: adapter.capabilities.cancel,
      repeatableCollect: adapter.capabilities.repeatableCollect,
      // E3: whether re-sending create is safe; a hand-written adapter that says nothing is safe only when it reconciles by re-sending.
      sameTokenResend: adapter.capabilities.sameTokenResend ?? adapter.reconciliationMethod === 'same_token_resend',
    },
    reconciliation: adapter.reconciliationMethod,
    ...(adapter.policy !== undefined ? { policy: adapter.policy } : {}),
    ...(ownQueue !== undefined ? { taskQueue: ownQueue } : {}),
  };
}

function ownsQueue(ownQueues: CreateProviderRegistryOptions['ownQueues'], name: string): boolean {
  return ownQueues === 'all' || (ownQueues ?? []).includes(name);
}

function isAdapter(p: ProviderAdapter | { name?: string; path: string }): p is ProviderAdapter {
  return typeof (p as ProviderAdapter).buildCreateRequest === 'function';
}

/** The name a contract reference is found by: the file name without its extension, or the bare name. */
export function fileNameOf(reference: string): string {
  return path.basename(reference).replace(/\.(json|ya?ml)$/i, '');
}

/** Makes the HTTP client of one adapter: its origin only, its credential by reference, authorised per request. */
function clientFor(adapter: ProviderAdapter, auth: AuthoriserOptions, http: ProviderHttpSettings): HttpClient {
  const authoriser = authoriserFor(adapter.credential, auth);
  return createHttpClient({
    allowedOrigin: new URL(adapter.baseUrl).origin,
    baseUrl: adapter.baseUrl,
    ...(authoriser === undefined ? {} : { authoriser }),
    requestIdHeaders: [
      ...new Set([adapter.requestIdHeader.toLowerCase(), 'x-request-id', 'x-ms-request-id', 'request-id']),
    ],
    ...(adapter.contract?.jsonContentTypes !== undefined
      ? { jsonContentTypes: adapter.contract.jsonContentTypes }
      : {}),
    ...http,
  });
}

/**
 * Builds a registry from adapters and contract references. Throws `ASYNCJOB_ERR_PROVIDER_DUPLICATE` for a
 * name given twice, and the loader's `ASYNCJOB_ERR_ADAPTER_*` errors for a contract that does not load.
 */
export async function createProviderRegistry(options: CreateProviderRegistryOptions): Promise<ProviderRegistry> {
  const env = options.env ?? process.env;
  const adapters: ProviderAdapter[] = [];
  for (const p of options.providers) {
    if (isAdapter(p)) {
      adapters.push(p);
      continue;
    }
    const servedAs = p.name ?? fileNameOf(p.path);
    const baseUrl = options.baseUrls?.[servedAs];
    const contract = await loadProviderContract(p.path, {
      searchDirs: options.searchDirs ?? [],
      env,
      ...(baseUrl !== undefined ? { baseUrl } : {}),
    });
    if (p.name === undefined && contract.name !== servedAs) {
      throw new ProviderContractError('ASYNCJOB_ERR_ADAPTER_INVALID', p.path, [
        {
          path: 'name',
          message: `the document is named "${contract.name}" but found as "${servedAs}": rename the file or the name: so they agree (a provider is served under its name:)`,
        },
      ]);
    }
    adapters.push(adapterFromContract(contract.name === servedAs ? contract : { ...contract, name: servedAs }));
  }
  const byName = new Map<string, RegisteredProvider>();
  try {
    for (const adapter of adapters) {
      const taskQueue = providerTaskQueue(options.taskQueue ?? DEFAULT_TASK_QUEUE, adapter.name);
      if (byName.has(adapter.name))
        throw new ProviderRegistryError(
          'ASYNCJOB_ERR_PROVIDER_DUPLICATE',
          adapter.name,
          `provider ${adapter.name} is registered twice`,
        );
      byName.set(
        adapter.name,
        Object.freeze({
          adapter,
          http: clientFor(
            adapter,
            {
              env,
              tokenTimeoutMs: options.http?.connectTimeoutMs ?? 10_000,
              ...(options.awsChain === undefined ? {} : { awsChain: options.awsChain }),
            },
            options.http ?? {},
          ),
          facts: providerFacts(adapter, ownsQueue(options.ownQueues, adapter.name) ? taskQueue : undefined),
          taskQueue,
        }),
      );
    }
  } catch (error) {
    await Promise.all([...byName.values()].map((p) => p.http.close()));
    throw error;
  }
  let closed = false;
  return {
    get(name: string): RegisteredProvider {
      const found = byName.get(name);
      if (found === undefined || closed) {
        throw new ProviderRegistryError(
          'ASYNCJOB_ERR_PROVIDER_UNKNOWN',
          name,
          closed
            ? `the registry is closed (provider ${name})`
            : `provider ${name} is not registered in this worker (known: ${[...byName.keys()].sort().join(', ') || 'none'})`,
        );
      }
      return found;
    },
    names: () => [...byName.keys()].sort(),
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await Promise.all([...byName.values()].map((p) => p.http.close()));
    },
  };
}

/** Options of {@link loadProviderRegistry}: provider names (contracts searched in `searchDirs`, then the presets). */
export type LoadProviderRegistryOptions = Omit<CreateProviderRegistryOptions, 'providers'> & {
  names: readonly string[];
};

/** Loads the named contracts (see `loadProviderContract`) into a registry. */
export async function loadProviderRegistry(options: LoadProviderRegistryOptions): Promise<ProviderRegistry> {
  const { names, ...rest } = options;
  return createProviderRegistry({ ...rest, providers: names.map((name) => ({ name, path: name })) });
}
