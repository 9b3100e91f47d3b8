/**
 * The three provider calls of the simulator's rest dialect made with plain undici and nothing else: no record,
 * no redaction, no classification beyond what is needed to finish. Shared by the naive in-process loop (the
 * ceiling) and the bare Temporal activities (the engine's own cost), so both make exactly the same requests.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';

/** Where the provider is and how to authenticate (the simulator's bearer token). */
export interface PlainProvider {
  baseUrl: string;
  token: string;
}

/** A verified result: the body's SHA-256 matched the one the provider advertised. */
export interface VerifiedResult {
  jobId: string;
  sha256: string;
  sizeBytes: number;
}

/** The provider answered something the loop cannot go on with. */
class PlainCallError extends Error {
  constructor(
    readonly code:
      | 'ASYNCJOB_BENCH_ERR_CREATE'
      | 'ASYNCJOB_BENCH_ERR_STATUS'
      | 'ASYNCJOB_BENCH_ERR_RESULT'
      | 'ASYNCJOB_BENCH_ERR_INTEGRITY',
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'PlainCallError';
  }
}

/** Plain calls to one provider over one pooled dispatcher. */
export interface PlainCalls {
  createJob(payload: unknown): Promise<string>;
  readStatus(jobId: string): Promise<string>;
  collectResult(jobId: string): Promise<VerifiedResult>;
  close(): Promise<void>;
}

/** Creates the plain calls (keep-alive pool of up to `connections` sockets). */
export function plainCalls(provider: PlainProvider, connections = 128): PlainCalls {
  const dispatcher = new Agent({ connections, keepAliveTimeout: 30_000 });
  const auth = { authorization: `Bearer ${provider.token}` };
  return {
    async createJob(payload) {
      const res = await request(`${provider.baseUrl}/v1/jobs`, {
        method: 'POST',
        dispatcher,
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify(payload),
      });
      const body = (await res.body.json()) as { job_id?: unknown };
      if ((res.statusCode !== 202 && res.statusCode !== 201) || typeof body.job_id !== 'string') {
        throw new PlainCallError('ASYNCJOB_BENCH_ERR_CREATE', `create answered ${res.statusCode}`);
      }
      return body.job_id;
    },
    async readStatus(jobId) {
      const res = await request(`${provider.baseUrl}/v1/jobs/${encodeURIComponent(jobId)}`, {
        method: 'GET',
        dispatcher,
        headers: auth,
      });
      const body = (await res.body.json()) as { state?: unknown };
      if (res.statusCode !== 200 || typeof body.state !== 'string')
        throw new PlainCallError('ASYNCJOB_BENCH_ERR_STATUS', `status answered ${res.statusCode}`);
      return body.state;
    },
    async collectResult(jobId) {
      const res = await request(`${provider.baseUrl}/v1/jobs/${encodeURIComponent(jobId)}/result`, {
        method: 'GET',
        dispatcher,
        headers: auth,
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new PlainCallError('ASYNCJOB_BENCH_ERR_RESULT', `result answered ${res.statusCode}`);
      }
      const hash = createHash('sha256');
      let sizeBytes = 0;
      for await (const chunk of res.body) {
        hash.update(chunk as Buffer);
        sizeBytes += (chunk as Buffer).length;
      }
      const sha256 = hash.digest('hex');
      const advertised = res.headers['x-content-sha256'];
      if (advertised !== sha256)
        throw new PlainCallError(
          'ASYNCJOB_BENCH_ERR_INTEGRITY',
          `sha256 ${sha256} differs from the advertised ${String(advertised)}`,
        );
      return { jobId, sha256, sizeBytes };
    },
    close: () => dispatcher.close(),
  };
}

/** Provider states after which no status read helps. */
export const FINAL_STATES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled', 'expired']);
