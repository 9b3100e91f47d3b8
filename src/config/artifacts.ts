/**
 * Where collected results are kept: the file store under `ASYNCJOB_ARTIFACTS_DIR` (src/config/worker.ts), or an
 * S3-compatible object store named by `ASYNCJOB_ARTIFACTS`. The object store's endpoint, region and credentials
 * are the standard AWS variables (`AWS_ENDPOINT_URL_S3`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, the shared files...),
 * read by `src/adapters/artifacts/open-artifact-store.ts`; only what AWS has no variable for is ours.
 */
import { z } from 'zod';
import { nonEmpty, setting } from './setting';

/** `s3://bucket` or `s3://bucket/prefix`: a DNS-style bucket name and a prefix of plain path segments. */
const S3_ARTIFACTS = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/([A-Za-z0-9_.-]+\/)*([A-Za-z0-9_.-]+\/?)?)?$/;

/** The object store's settings; `ASYNCJOB_ARTIFACTS` unset keeps the file store. */
export const artifactSettings = {
  ASYNCJOB_ARTIFACTS: setting(
    z
      .string()
      .trim()
      .regex(S3_ARTIFACTS, 'must be s3://BUCKET or s3://BUCKET/PREFIX (letters, digits, ._- in each prefix segment)')
      .refine(
        (value) =>
          !value
            .split('/')
            .slice(3)
            .some((segment) => segment === '.' || segment === '..'),
        {
          message: 'a prefix segment cannot be . or ..',
        },
      )
      .optional(),
    {
      group: 'worker',
      usedBy: ['worker', 'client', 'CLI', 'doctor', 'audit', 'mcp'],
      description:
        'collected results in an S3-compatible object store: `s3://BUCKET/PREFIX`, each result at `PREFIX/<sha256 of the operation ID>/<artifact name>`; endpoint, region and credentials are the standard AWS variables (`AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, roles)',
      example: 's3://acme-results/asyncjob',
      whenUnset: 'the file store at `ASYNCJOB_ARTIFACTS_DIR`',
    },
  ),
  ASYNCJOB_ARTIFACTS_S3_FORCE_PATH_STYLE: setting(z.enum(['true', 'false']).default('false'), {
    group: 'worker',
    usedBy: ['worker', 'client', 'CLI', 'doctor', 'audit', 'mcp'],
    description:
      '`true` addresses the bucket in the path (`http://host/BUCKET/KEY`), as most S3-compatible servers (MinIO, moto, Ceph) need; `false` uses virtual-hosted names (`BUCKET.host`), as AWS prefers',
    example: 'true',
  }),
  ASYNCJOB_ARTIFACTS_S3_SSE: setting(z.enum(['AES256', 'aws:kms', 'aws:kms:dsse']).optional(), {
    group: 'worker',
    usedBy: ['worker'],
    description:
      'server-side encryption asked for on every result written (`x-amz-server-side-encryption`): `AES256`, `aws:kms` or `aws:kms:dsse`',
    example: 'aws:kms',
    whenUnset: "the bucket's default encryption",
  }),
  ASYNCJOB_ARTIFACTS_S3_SSE_KMS_KEY_ID: setting(nonEmpty().optional(), {
    group: 'worker',
    usedBy: ['worker'],
    description:
      'the KMS key (ID, ARN or alias) of `aws:kms` encryption; only with `ASYNCJOB_ARTIFACTS_S3_SSE=aws:kms`',
    example: 'alias/asyncjob-results',
    whenUnset: "the account's AWS-managed key",
  }),
};
