/**
 * The one place the artifact store is chosen from the settings, for the worker, the client, the CLI, `asyncjob mcp`
 * and `asyncjob audit`: `ASYNCJOB_ARTIFACTS=s3://bucket/prefix` is the object store, else the file store at
 * `ASYNCJOB_ARTIFACTS_DIR`. The object store's endpoint, region and credentials are the standard AWS variables of
 * the environment given; what AWS leaves unset is the SDK's own default chain (shared files, SSO, roles).
 */
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { ConfigError, configSchema, type Config } from '../../config';
import { FileArtifactStore, type ArtifactStore } from './artifact-store';
import { S3ArtifactStore } from './s3-artifact-store';

/** The settings the choice reads (a {@link Config} has them all). */
export type ArtifactSettings = Pick<
  Config,
  | 'ASYNCJOB_ARTIFACTS'
  | 'ASYNCJOB_ARTIFACTS_DIR'
  | 'ASYNCJOB_ARTIFACTS_S3_FORCE_PATH_STYLE'
  | 'ASYNCJOB_ARTIFACTS_S3_SSE'
  | 'ASYNCJOB_ARTIFACTS_S3_SSE_KMS_KEY_ID'
>;

/** The S3 client of the standard AWS variables in `env`, with our addressing style. */
function s3ClientConfig(settings: ArtifactSettings, env: Readonly<Record<string, string | undefined>>): S3ClientConfig {
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL;
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  return {
    ...(endpoint ? { endpoint } : {}),
    ...(region ? { region } : {}),
    forcePathStyle: settings.ASYNCJOB_ARTIFACTS_S3_FORCE_PATH_STYLE === 'true',
    ...(accessKeyId && secretAccessKey
      ? {
          credentials: {
            accessKeyId,
            secretAccessKey,
            ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
          },
        }
      : {}),
  };
}

/**
 * The artifact store the settings name. The environment is read for the AWS variables only (default
 * `process.env`); no request is made until the store is used.
 */
export function openArtifactStore(
  settings: ArtifactSettings,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ArtifactStore {
  if (settings.ASYNCJOB_ARTIFACTS === undefined) return new FileArtifactStore(settings.ASYNCJOB_ARTIFACTS_DIR);
  const sse = settings.ASYNCJOB_ARTIFACTS_S3_SSE;
  const kmsKeyId = settings.ASYNCJOB_ARTIFACTS_S3_SSE_KMS_KEY_ID;
  return S3ArtifactStore.at(settings.ASYNCJOB_ARTIFACTS, s3ClientConfig(settings, env), {
    ...(sse !== undefined
      ? { encryption: { serverSideEncryption: sse, ...(kmsKeyId !== undefined ? { kmsKeyId } : {}) } }
      : {}),
  });
}

const artifactSettingsSchema = configSchema.pick({
  ASYNCJOB_ARTIFACTS: true,
  ASYNCJOB_ARTIFACTS_DIR: true,
  ASYNCJOB_ARTIFACTS_S3_FORCE_PATH_STYLE: true,
  ASYNCJOB_ARTIFACTS_S3_SSE: true,
  ASYNCJOB_ARTIFACTS_S3_SSE_KMS_KEY_ID: true,
});

/**
 * The artifact settings of `env` alone, for a command or a client that reads no other setting. Throws
 * {@link ConfigError} naming every bad one.
 */
export function artifactSettingsOf(env: Readonly<Record<string, string | undefined>>): ArtifactSettings {
  const parsed = artifactSettingsSchema.safeParse(env);
  if (!parsed.success)
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  return parsed.data;
}
