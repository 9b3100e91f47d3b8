/**
 * The configuration, described once: every environment variable asyncjob reads is a field of
 * {@link environmentSchema}, with its type, its default and its description (group, who reads it, whether it is a
 * secret) as metadata (`src/config/setting.ts`). docs/configuration.md, `asyncjob worker --help` and `asyncjob
 * doctor` are rendered from it (src/doctor/settings.ts). The processes' part, {@link configSchema}, is validated
 * at once with every problem listed (never one at a time). Temporal connection settings follow Temporal's
 * environment conventions (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS_*, TEMPORAL_API_KEY). Secrets are
 * referenced by file where possible.
 */
import { z } from 'zod';
import { AsyncJobError } from './core/errors';
import { settingRegistry, type SettingMeta } from './config/setting';
import { codecServerSettings, payloadKeySettings } from './config/payloads';
import { artifactSettings } from './config/artifacts';
import { temporalSettings } from './config/temporal';
import {
  checkpointKeySettings,
  deciderKeySettings,
  demoSettings,
  mcpSettings,
  simulatorSettings,
} from './config/tools';
import { chainKeySettings, receiverSettings, workerSettings } from './config/worker';

export { SETTING_GROUPS, type SettingGroup, type SettingUser } from './config/setting';

/**
 * What `loadConfig` reads: the Temporal connection, the worker, the webhook receiver and the audit chain key
 * (environment variable names as keys).
 */
export const configSchema = z.object({
  ...temporalSettings,
  ...workerSettings,
  ...artifactSettings,
  ...receiverSettings,
  ...chainKeySettings,
  ...payloadKeySettings,
});
/** The validated configuration. */
export type Config = z.infer<typeof configSchema>;

/**
 * Every environment variable asyncjob reads: {@link configSchema}, and those the tools read where they are used
 * (audit checkpoint keys, deciders' key files, the presets' simulator variables, the demo, `asyncjob mcp`).
 */
export const environmentSchema = configSchema.extend({
  ...checkpointKeySettings,
  ...deciderKeySettings,
  ...simulatorSettings,
  ...demoSettings,
  ...mcpSettings,
  ...codecServerSettings,
});

/** One variable of {@link environmentSchema}: its name, description and default. */
export interface SettingDescription extends SettingMeta {
  readonly name: string;
  /** The value in effect when it is unset (the schema's default); undefined when there is none. */
  readonly defaultValue: unknown;
}

/** Every variable of {@link environmentSchema} with its description, in the schema's order. Pure. */
export function describeSettings(): SettingDescription[] {
  return Object.entries(environmentSchema.shape).map(([name, schema]) => {
    const meta = settingRegistry.get(schema);
    if (meta === undefined) throw new Error(`${name} has no description in the configuration schema`);
    const unset = schema.safeParse(undefined);
    return { name, ...meta, defaultValue: unset.success ? unset.data : undefined };
  });
}

/** Our fault: the environment is misconfigured. Lists every problem. */
export class ConfigError extends AsyncJobError {
  constructor(readonly problems: string[]) {
    super('ASYNCJOB_ERR_CONFIG_INVALID', `invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
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
  if (env.ASYNCJOB_ARTIFACTS_S3_SSE_KMS_KEY_ID && !env.ASYNCJOB_ARTIFACTS_S3_SSE?.startsWith('aws:kms')) {
    problems.push('ASYNCJOB_ARTIFACTS_S3_SSE_KMS_KEY_ID: a KMS key goes with ASYNCJOB_ARTIFACTS_S3_SSE=aws:kms');
  }
  if (env.ASYNCJOB_AUDIT_HMAC_KEY_FILE && env.ASYNCJOB_AUDIT_HMAC_KEY) {
    problems.push('ASYNCJOB_AUDIT_HMAC_KEY: set ASYNCJOB_AUDIT_HMAC_KEY_FILE or ASYNCJOB_AUDIT_HMAC_KEY, not both');
  }
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  return result.data;
}
