/**
 * Process configuration from the environment, validated at once with every problem listed (never one at a
 * time). Temporal connection settings follow Temporal's environment conventions (TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_TLS_*, TEMPORAL_API_KEY). Secrets are referenced by file where possible.
 */
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const nonEmpty = z.string().trim().min(1);

/** The configuration schema (environment variable names as keys). */
export const configSchema = z.object({
  TEMPORAL_ADDRESS: nonEmpty.default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: nonEmpty.default('default'),
  TEMPORAL_TLS_CERT: nonEmpty.optional(),
  TEMPORAL_TLS_KEY: nonEmpty.optional(),
  TEMPORAL_TLS_CA: nonEmpty.optional(),
  TEMPORAL_TLS_SERVER_NAME: nonEmpty.optional(),
  TEMPORAL_API_KEY: nonEmpty.optional(),
  ASYNCJOB_TASK_QUEUE: nonEmpty.default('asyncjob'),
  /** `sqlite:<path>` or a `postgres://` connection string. */
  ASYNCJOB_STORE: z
    .string()
    .regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, 'must be sqlite:<path> or postgres://...')
    .default('sqlite:.asyncjob/asyncjob.db'),
  ASYNCJOB_ARTIFACTS_DIR: nonEmpty.default('.asyncjob/artifacts'),
  /** The providers this worker serves: comma-separated contract names or files (searched in ASYNCJOB_PROVIDERS_PATH, then the presets). */
  ASYNCJOB_PROVIDERS: z.string().default(''),
  /** Requests per second per provider across the fleet (`maxTaskQueueActivitiesPerSecond`); unlimited when absent. */
  ASYNCJOB_PROVIDER_RATE_LIMIT: z.coerce.number().positive().optional(),
  /** Status reads planned at most this far apart stay in one activity (0: one activity per read). */
  ASYNCJOB_POLL_LOOP_MAX_WAIT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(10 * 60_000)
    .default(30_000),
  /** How long one status-polling activity keeps an operation before handing it back to its workflow. */
  ASYNCJOB_POLL_LOOP_MAX_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(9 * 60_000)
    .default(120_000),
  /** Workflows a worker keeps in memory (each about 2 MiB); evicted ones replay from history when they wake. */
  ASYNCJOB_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(100_000).optional(),
  /**
   * A workflow bundle written by `asyncjob bundle --out FILE`, so the worker starts without bundling (seconds of
   * CPU); its file is checked at start (`checkWorkflowBundle`, src/worker.ts). Bundled from source when absent.
   */
  ASYNCJOB_WORKFLOW_BUNDLE: nonEmpty.optional(),
  /** Extra directories (path-delimited) searched for provider contract documents, before the presets. */
  ASYNCJOB_PROVIDERS_PATH: z.string().default(''),
  /** `host:port` for Prometheus metrics, or empty to disable. */
  ASYNCJOB_METRICS_ADDRESS: z.string().default(''),
  ASYNCJOB_WEBHOOK_PORT: port.optional(),
  /**
   * The HMAC key that signs the audit chain (kept outside the database): a file holding it, or the value. One of
   * the two; read by the worker and every `asyncjob audit` command through `src/audit/keys.ts`.
   */
  ASYNCJOB_AUDIT_HMAC_KEY_FILE: nonEmpty.optional(),
  ASYNCJOB_AUDIT_HMAC_KEY: nonEmpty.optional(),
  ASYNCJOB_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
});
/** The validated configuration. */
export type Config = z.infer<typeof configSchema>;

/** Our fault: the environment is misconfigured. Lists every problem. */
export class ConfigError extends Error {
  readonly code = 'ASYNCJOB_ERR_CONFIG_INVALID';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and validates the configuration; throws {@link ConfigError} listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = configSchema.safeParse(env);
  const problems = result.success
    ? []
    : result.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`);
  // Checked on the raw environment so it is reported together with the field errors.
  if (Boolean(env.TEMPORAL_TLS_CERT) !== Boolean(env.TEMPORAL_TLS_KEY)) {
    problems.push('TEMPORAL_TLS_CERT: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together');
  }
  if (env.ASYNCJOB_AUDIT_HMAC_KEY_FILE && env.ASYNCJOB_AUDIT_HMAC_KEY) {
    problems.push('ASYNCJOB_AUDIT_HMAC_KEY: set ASYNCJOB_AUDIT_HMAC_KEY_FILE or ASYNCJOB_AUDIT_HMAC_KEY, not both');
  }
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  return result.data;
}
