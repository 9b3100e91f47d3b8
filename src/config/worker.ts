/** The settings of the worker process, of the webhook receiver it runs, and the audit chain's key it writes with. */
import { z } from 'zod';
import { nonEmpty, port, setting } from './setting';

/**
 * Workflows kept in memory by default. Each cached workflow holds its own instance of the workflow's modules,
 * ~1 MiB of live heap (schemas are built on first use, `core/lazy-schema.ts`), and V8 lets garbage grow to 2-4x
 * the live heap between collections, so this number, not the number of waiting operations, sets the worker's
 * memory (bench/README.md). 128 keeps 10,000 waiting operations well under 1 GiB with no loss of throughput at 100
 * operations in flight; raise it for more operations in flight at once.
 */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 128;

/**
 * Provider-call activities a worker runs at once per provider queue by default. A status loop holds its slot while
 * it waits between reads (`core/poll-loop.ts`), so this bounds the operations polling at once in one process, not
 * only the requests in flight; each waiting loop costs a timer and a few KiB.
 */
export const DEFAULT_PROVIDER_CALL_SLOTS = 1_000;

/** The providers served, store, artifacts, rate, cache, workflow bundle, metrics and logs. */
export const workerSettings = {
  ASYNCJOB_PROVIDERS: setting(z.string().default(''), {
    group: 'worker',
    usedBy: ['worker', 'doctor', 'mcp'],
    description:
      'required: the providers served, comma-separated contract files or names (searched in ASYNCJOB_PROVIDERS_PATH, then the presets); each is served under its name:, which must agree with its file name',
    example: './providers/reports.yaml,vm-images',
  }),
  ASYNCJOB_PROVIDERS_PATH: setting(z.string().default(''), {
    group: 'worker',
    usedBy: ['worker', 'doctor', 'adapter'],
    description: 'directories (separated by `:`) searched for a contract given by name, before the built-in presets',
    example: './providers:/etc/asyncjob/providers',
  }),
  ASYNCJOB_STORE: setting(
    z
      .string()
      .regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, 'must be sqlite:<path> or postgres://...')
      .default('sqlite:.asyncjob/asyncjob.db'),
    {
      group: 'worker',
      usedBy: ['worker', 'receiver', 'doctor', 'audit', 'mcp'],
      description:
        'the operation store: `sqlite:PATH` or `postgres://...`; migrations are applied when a worker starts',
      example: 'postgres://asyncjob@db:5432/asyncjob',
    },
  ),
  ASYNCJOB_ARTIFACTS_DIR: setting(nonEmpty().default('.asyncjob/artifacts'), {
    group: 'worker',
    usedBy: ['worker', 'client', 'CLI', 'doctor', 'audit', 'mcp'],
    description:
      'directory where collected results are stored (created if missing), unless `ASYNCJOB_ARTIFACTS` names an object store',
    example: '/var/lib/asyncjob/artifacts',
  }),
  ASYNCJOB_PROVIDER_RATE_LIMIT: setting(z.coerce.number().positive().optional(), {
    group: 'worker',
    usedBy: ['worker'],
    description:
      "provider calls per second per provider, as the provider counts them (arrivals in any sliding second): strict across the fleet with a PostgreSQL store (send slots shared by every worker; a worker that cannot reach the store sends nothing), strict per worker process with SQLite; also the server's `maxTaskQueueActivitiesPerSecond`",
    example: '20',
    whenUnset: 'unlimited',
  }),
  ASYNCJOB_POLL_LOOP_MAX_WAIT_MS: setting(
    z.coerce
      .number()
      .int()
      .min(0)
      .max(10 * 60_000)
      .default(30_000),
    {
      group: 'worker',
      usedBy: ['worker'],
      description:
        'status reads planned at most this many ms apart are made in one heartbeating activity (no workflow task, timer or activity per read); longer waits are retries of that activity (nothing in history between reads); `0` turns the loop off (one activity and one durable timer per read). Under `ASYNCJOB_PROVIDER_RATE_LIMIT` each read of a loop is paced (and takes its fleet send slot) like any provider request',
      example: '10000',
    },
  ),
  ASYNCJOB_POLL_LOOP_MAX_MS: setting(
    z.coerce
      .number()
      .int()
      .min(1_000)
      .max(9 * 60_000)
      .default(120_000),
    {
      group: 'worker',
      usedBy: ['worker'],
      description:
        'the longest one attempt of the status-polling activity keeps an operation (it holds an activity slot meanwhile); the next attempt goes on at the next planned read (operations started on an earlier version: handed back to the workflow)',
      example: '60000',
    },
  ),
  ASYNCJOB_PROVIDER_CALL_SLOTS: setting(
    z.coerce.number().int().min(1).max(100_000).default(DEFAULT_PROVIDER_CALL_SLOTS),
    {
      group: 'worker',
      usedBy: ['worker'],
      description:
        "provider calls this worker runs at once (Temporal's `maxConcurrentActivityTaskExecutions`): on the workflows' task queue for its providers together, and per provider on each provider's own queue (a rate-limited provider's calls); a status loop holds its slot while it waits between reads, so this bounds the operations polling at once in this process; other workers take what this one leaves",
      example: '200',
    },
  ),
  ASYNCJOB_MAX_CACHED_WORKFLOWS: setting(
    z.coerce.number().int().min(0).max(100_000).default(DEFAULT_MAX_CACHED_WORKFLOWS),
    {
      group: 'worker',
      usedBy: ['worker'],
      description:
        "workflows kept in memory (about 1 MiB each; evicted ones replay from history when they wake); sets the worker's memory, not the number of waiting operations",
      example: '512',
    },
  ),
  ASYNCJOB_DECIDER_POLICY: setting(nonEmpty().optional(), {
    group: 'worker',
    usedBy: ['worker', 'doctor'],
    description:
      'the policy file whose `deciders` section says who may decide which escalations, within which limits, with which keys (docs/operating.md#who-may-decide); read once at start, which it refuses when the file is invalid; each operation keeps the policy it started under',
    example: '/etc/asyncjob/policy.yaml',
    whenUnset:
      'none: anyone who can signal or update the workflow decides, under any name (agents and requesters still refused); the worker and `asyncjob doctor` warn',
  }),
  ASYNCJOB_WORKFLOW_BUNDLE: setting(nonEmpty().optional(), {
    group: 'worker',
    usedBy: ['worker'],
    description:
      "workflow bundle written by `asyncjob bundle --out FILE`: the worker starts without bundling its workflows (seconds of CPU); refused at start unless written by this asyncjob version from this install's workflow sources",
    example: '/app/workflow-bundle.js',
    whenUnset: 'bundled at start',
  }),
  ASYNCJOB_NEXUS_ENDPOINT: setting(
    z
      .string()
      .trim()
      .regex(/^[A-Za-z][A-Za-z0-9_-]{0,199}$/, 'must be a Nexus endpoint name: a letter, then letters, digits, _ or -')
      .optional(),
    {
      group: 'worker',
      usedBy: ['worker', 'doctor'],
      description:
        'the Nexus endpoint that routes to this worker (docs/nexus.md): the worker serves the `asyncjob` Nexus service (`runJob`, `getOperation`, `requestCancel`) on its task queue, and `asyncjob doctor` checks that the endpoint exists and targets this namespace and task queue; the `--nexus-endpoint` flag of the worker command sets it too',
      example: 'asyncjob',
      whenUnset: 'no Nexus service',
    },
  ),
  ASYNCJOB_METRICS_ADDRESS: setting(z.string().default(''), {
    group: 'worker',
    usedBy: ['worker', 'receiver', 'doctor'],
    description:
      "host:port of the Prometheus endpoint (`/metrics`): Temporal's runtime metrics, `asyncjob_provider_requests`, `asyncjob_escalations`, `asyncjob_webhook_requests`",
    example: '0.0.0.0:9464',
    whenUnset: 'off',
  }),
  ASYNCJOB_LOG_LEVEL: setting(z.enum(['debug', 'info', 'warn', 'error']).default('info'), {
    group: 'worker',
    usedBy: ['worker', 'receiver'],
    description: '`debug`, `info`, `warn` or `error`; JSON lines on stderr',
    example: 'warn',
  }),
};

/** The webhook receiver, run inside the worker process when a port is set. */
export const receiverSettings = {
  ASYNCJOB_WEBHOOK_PORT: setting(port().optional(), {
    group: 'receiver',
    usedBy: ['worker', 'receiver', 'doctor'],
    description: 'port of the webhook receiver run beside the worker (`POST /webhooks/<provider>`)',
    example: '8088',
    whenUnset: 'no receiver',
  }),
  ASYNCJOB_WEBHOOK_HOST: setting(nonEmpty().default('0.0.0.0'), {
    group: 'receiver',
    usedBy: ['receiver', 'doctor'],
    description: 'interface the webhook receiver listens on',
    example: '127.0.0.1',
  }),
};

/**
 * The HMAC key that signs the audit chain, kept outside the database: a file holding it, or the value, not both;
 * read by the worker and every `asyncjob audit` command through `src/audit/keys.ts`.
 */
export const chainKeySettings = {
  ASYNCJOB_AUDIT_HMAC_KEY_FILE: setting(nonEmpty().optional(), {
    group: 'audit',
    usedBy: ['worker', 'audit', 'doctor'],
    description:
      'file holding the HMAC key that signs the audit chain, kept outside the database (preferred over ASYNCJOB_AUDIT_HMAC_KEY; not both)',
    example: '/run/secrets/asyncjob-audit-hmac',
  }),
  ASYNCJOB_AUDIT_HMAC_KEY: setting(nonEmpty().optional(), {
    group: 'audit',
    usedBy: ['worker', 'audit', 'doctor'],
    description: 'the same HMAC key given as a value (the `_FILE` form keeps it out of the environment)',
    example: '(from your secret store)',
    secret: true,
  }),
};
