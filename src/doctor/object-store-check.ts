/**
 * `asyncjob doctor`'s look at the object store `ASYNCJOB_ARTIFACTS` names: one read of a key that cannot exist,
 * inside the prefix. S3 answers it `NoSuchKey` only when the endpoint is reached, the credentials and the signature
 * are accepted and the bucket exists; nothing is written.
 */
import { randomBytes } from 'node:crypto';
import type { ArtifactStore } from '../adapters/artifacts/artifact-store';
import { ok, problem, type Finding } from './findings';

const FIX =
  'check ASYNCJOB_ARTIFACTS (the bucket), AWS_ENDPOINT_URL_S3 and AWS_REGION, ASYNCJOB_ARTIFACTS_S3_FORCE_PATH_STYLE for a server other than AWS, and that the credentials may s3:GetObject, s3:PutObject and s3:ListBucket';

/** Whether the object store at `url` answers as a bucket this process may use, within `timeoutMs`. */
export async function checkObjectStore(url: string, store: ArtifactStore, timeoutMs: number): Promise<Finding> {
  const probe = `${url.replace(/\/+$/, '')}/${'0'.repeat(64)}/0-doctor-${randomBytes(4).toString('hex')}`;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  try {
    const answer = await Promise.race([store.describe(probe), timedOut]);
    if (answer === 'timeout') return problem('artifacts', 'setup', `${url} did not answer within ${timeoutMs} ms`, FIX);
    return ok('artifacts', `${url} answers: the bucket exists and the credentials are accepted`);
  } catch (err) {
    const e = err as { name?: string; message?: string };
    return problem('artifacts', 'setup', `${url} cannot be read: ${e.name ?? 'Error'}: ${e.message ?? ''}`, FIX);
  } finally {
    clearTimeout(timer);
  }
}
